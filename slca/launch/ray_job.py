"""verl runs on SLURM: one job array of the verl backend's Ray template (SLURM/verl_ray_job.sbatch)
instead of submitit's one-task job (docs/launch.md#verl-runs-on-slurm).

Every verl run takes this path, on one node as on many: the script a one-node test job runs is the
one a four-node reference run runs, Ray gets the allocation's resources rather than whatever
`ray.init()` finds on a shared node, and requeueing lives in one place. The records are the ones
submitit's runs leave: manifest entries with `<array job>_<index>` job ids and the task's log, and
`job.json` written by `python -m slca.launch.job` on the head node.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from slca.fileio import atomic_write_text
from slca.launch.base import RunPlan, Submission, SweepError
from slca.launch.slurm import BATCH_JOBS


@BATCH_JOBS.register("verl")
def submit_ray_jobs(plans: list[RunPlan], cfg: Any, *, name: str, log_dir: Path, echo: Callable[[str], None]) -> list[Submission]:
    """Submit `plans` as one array of Ray jobs; returns once SLURM has queued it. The script that was
    submitted is kept as `<log_dir>/ray-<job id>.sbatch`."""
    from slca.backends.verl.slurm import verl_job

    log_dir = log_dir.resolve()
    log_dir.mkdir(parents=True, exist_ok=True)
    script = verl_job([(plan.spec, plan.run_dir.resolve()) for plan in plans], cfg, name=name, log_dir=log_dir, python=sys.executable, workdir=Path.cwd())
    handle, pending = tempfile.mkstemp(prefix=".ray-", suffix=".sbatch", dir=log_dir)
    os.close(handle)
    try:
        atomic_write_text(pending, script)
        job = sbatch(Path(pending), what=f"{len(plans)} verl run(s)")
        os.replace(pending, log_dir / f"ray-{job}.sbatch")
    finally:
        Path(pending).unlink(missing_ok=True)
    for plan in plans:
        _service_artefacts(plan, cfg, echo)
    return [Submission(plan.key, f"{job}_{index}", index, str(log_dir / f"ray-{job}_{index}.out")) for index, plan in enumerate(plans)]


def sbatch(script: Path, *, what: str) -> str:
    """`sbatch --parsable script`: the job id; a refusal is one SweepError line with sbatch's reason."""
    try:
        proc = subprocess.run(["sbatch", "--parsable", str(script)], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        raise SweepError(f"launcher=slurm: submitting {what} failed: {type(exc).__name__}: {exc}") from None
    if proc.returncode != 0:
        reason = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
        raise SweepError(f"launcher=slurm: submitting {what} failed: {reason[-1] if reason else f'sbatch exited with {proc.returncode}'}")
    return proc.stdout.strip().split(";")[0]  # "<id>[;<cluster>]"


def _service_artefacts(plan: RunPlan, cfg: Any, echo: Callable[[str], None]) -> None:
    """The vLLM service scripts of the services a run talks to, written beside it, not submitted:
    no config field asks slca to start them, so the run uses the `base_url` its spec names."""
    from slca.backends.verl.slurm import service_job, services

    for service in services(plan.spec):
        path = atomic_write_text(plan.run_dir / "slurm" / f"{service.name}.sbatch", service_job(plan.spec, plan.run_dir, service, gpus=max(cfg.gpus_per_node, 1)))
        url = _field(plan.spec, service.spec_field)
        echo(f"[{plan.key}] {service.spec_field}={url}: slca starts no {service.name} service; {path} serves {service.model} if you need one")


def _field(spec: Any, dotted: str) -> Any:
    node = spec
    for part in dotted.split("."):
        node = getattr(node, part)
    return node
