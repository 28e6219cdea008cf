"""SLURM jobs for a verl run, filled from the spec: the multi-node Ray + verl job
(SLURM/verl_ray_job.sbatch) and the vLLM services behind the SGLS tool simulator and the LLM
summary judge (SLURM/vllm_service.sbatch). Submitting them is the SLURM launcher's job; this
module only renders them.

Each service writes its base URL into a file under the run directory once it answers; the verl
job waits for those files and hands the URLs to `slca run` as overrides, so the trainer talks to
the services of this very submission.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slca.config.spec import Spec

TEMPLATES = Path(__file__).resolve().parents[3] / "SLURM"
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


def render(template: str, values: dict[str, Any]) -> str:
    """`template` with every {{name}} replaced; a missing or an unused value is a KeyError naming it."""
    names = set(_PLACEHOLDER.findall(template))
    missing, unused = names - set(values), set(values) - names
    if missing or unused:
        raise KeyError(f"template placeholders missing {sorted(missing)}, unused {sorted(unused)}")
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)


@dataclass(frozen=True)
class Service:
    """One vLLM service a run needs: which spec field takes its URL, and what it serves."""

    name: str
    spec_field: str
    model: str
    port: int


def services(spec: Spec) -> list[Service]:
    """The services the spec talks to: the SGLS simulator and the LLM judge, when chosen."""
    found = []
    if spec.simulator.name == "sgls":
        found.append(Service("sgls", "simulator.base_url", spec.simulator.model, _port(spec.simulator.base_url)))
    if spec.reward.name == "hierr" and spec.reward.judge.name == "llm":
        found.append(Service("judge", "reward.judge.base_url", spec.reward.judge.model, _port(spec.reward.judge.base_url)))
    return found


def _port(url: str) -> int:
    match = re.search(r":(\d+)(?:/|$)", url)
    return int(match.group(1)) if match else 8000


def endpoint_file(run_dir: Path, service: Service) -> Path:
    return run_dir / "endpoints" / f"{service.name}.url"


def _sbatch_extra(launcher: Any) -> str:
    lines = [f"#SBATCH --{key}={value}" for key, value in (("partition", launcher.partition), ("account", launcher.account), ("qos", launcher.qos)) if value]
    if launcher.mem_gb:
        lines.append(f"#SBATCH --mem={launcher.mem_gb}G")
    return "\n".join(lines)


def _common(spec: Spec, job_name: str, run_dir: Path) -> dict[str, Any]:
    launcher = spec.launcher
    return {
        "job_name": job_name,
        "cpus_per_task": launcher.cpus_per_task,
        "time_min": launcher.time_min,
        "log_dir": shlex.quote(str(run_dir / "logs")),
        "sbatch_extra": _sbatch_extra(launcher),
        "setup": "\n".join(launcher.setup),
    }


def verl_job(spec: Spec, run_dir: Path, slca: str = "slca") -> str:
    """The sbatch script of the verl RL job for `spec` (launcher=slurm) in `run_dir`: Ray on
    `backend.nnodes` nodes, then `slca run --here --spec <run_dir>/spec.yaml` on the head node with the
    services' URLs as overrides (slca's rl stage launches verl into the Ray cluster)."""
    if spec.launcher.name != "slurm":
        raise ValueError("launcher.name: a SLURM job needs launcher=slurm")
    waits, overrides = [], []
    for index, service in enumerate(services(spec)):
        path = shlex.quote(str(endpoint_file(run_dir, service)))
        waits.append(f"until [ -s {path} ]; do sleep 10; done\nurl_{index}=$(cat {path})")
        overrides.append(f'"{service.spec_field}=$url_{index}"')
    # --here: the saved spec names launcher=slurm, and the job must run it, not submit it again.
    command = " ".join([slca, "run", "--here", "--spec", shlex.quote(str(run_dir / "spec.yaml")), *overrides])
    return render(
        (TEMPLATES / "verl_ray_job.sbatch").read_text(encoding="utf-8"),
        {
            **_common(spec, f"{spec.experiment}-verl", run_dir),
            "nodes": spec.backend.nnodes,
            "gpus_per_node": spec.backend.n_gpus_per_node,
            "wait_for_endpoints": "\n".join(waits),
            "env": "RAY_USAGE_STATS_ENABLED=0",
            "command": command,
        },
    )


def service_job(spec: Spec, run_dir: Path, service: Service, gpus: int) -> str:
    """The sbatch script serving `service` with `vllm serve` on one node of `gpus` GPUs."""
    return render(
        (TEMPLATES / "vllm_service.sbatch").read_text(encoding="utf-8"),
        {
            **_common(spec, f"{spec.experiment}-{service.name}", run_dir),
            "gpus": gpus,
            "port": service.port,
            "model": shlex.quote(service.model),
            "served_name": shlex.quote(service.model),
            "endpoint_file": shlex.quote(str(endpoint_file(run_dir, service))),
        },
    )
