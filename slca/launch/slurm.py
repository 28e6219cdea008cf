"""`launcher=slurm`: runs as SLURM jobs through submitit, a sweep as one job array.

submitit directly rather than Hydra's submitit launcher plugin: slca composes specs itself (typed,
validated before anything is submitted), a sweep must resubmit only its unfinished runs into an
existing directory, and the job function must be checkpointable; with submitit's executor that is
one `batch()` and one small class (docs/launch.md#why-submitit-directly).

Preemption and time limits: SLURM signals the job `signal_delay_s` before its limit; submitit calls
`SlurmJob.checkpoint`, which hands back the same job (the run resumes from its own checkpoints, so
there is nothing else to save) and requeues it. A requeue by `scontrol requeue` restarts the same
pickled job. Either way `slca run --spec` resumes the run directory from its last checkpoint.

Runs of a backend in `BATCH_JOBS` (verl: a Ray cluster over the job's nodes) are submitted from that
backend's own batch script instead (`ray_job.py`), with the same records.
"""

from __future__ import annotations

import importlib
import subprocess
from pathlib import Path
from typing import Any, Callable

from slca.launch.base import LAUNCHERS, LiveJob, RunPlan, Submission, SweepError
from slca.launch.job import run_job
from slca.launch.snapshot import Snapshot
from slca.registry import Registry

# Backend name -> submit(plans, cfg, *, name, log_dir, echo) -> submissions, for backends whose runs
# need their own batch script; filled on import of the modules below.
BATCH_JOBS: Registry[Callable[..., list[Submission]]] = Registry("SLURM batch job")
_BATCH_JOB_MODULES = ("slca.launch.ray_job",)


class JobFailed(RuntimeError):
    """Raised in the job so that SLURM records it as FAILED; the message is slca's error line."""


class SlurmJob:
    """The callable submitit pickles: runs one run directory; requeued as is on preemption or timeout."""

    def __init__(self, run_dir: str) -> None:
        self.run_dir = run_dir

    def __call__(self) -> int:
        import submitit

        env = submitit.JobEnvironment()
        outcome = run_job(Path(self.run_dir), job_id=str(env.job_id), log=str(env.paths.stderr))
        if outcome.code:
            raise JobFailed(outcome.error or f"slca run exited with {outcome.code}")
        return outcome.code

    def checkpoint(self) -> Any:
        import submitit

        return submitit.helpers.DelayedSubmission(SlurmJob(self.run_dir))


def executor_parameters(cfg: Any, name: str) -> dict[str, Any]:
    """submitit `update_parameters` keywords for a launcher config (the `launcher` group, slurm option)."""
    params: dict[str, Any] = {
        "name": name,
        "nodes": cfg.nodes,
        "tasks_per_node": 1,
        "cpus_per_task": cfg.cpus_per_task,
        "timeout_min": cfg.time_min,
        "slurm_array_parallelism": cfg.array_parallelism,
        "slurm_signal_delay_s": cfg.signal_delay_s,
        "slurm_setup": list(cfg.setup),
        "slurm_additional_parameters": dict(cfg.sbatch_extra),
        "slurm_max_num_timeout": cfg.max_num_timeout,
    }
    if cfg.gpus_per_node:
        params["gpus_per_node"] = cfg.gpus_per_node
    optional = {"slurm_partition": cfg.partition, "mem_gb": cfg.mem_gb, "slurm_account": cfg.account, "slurm_qos": cfg.qos}
    params.update({k: v for k, v in optional.items() if v is not None})
    return params


@LAUNCHERS.register("slurm")
class SlurmLauncher:
    runs_single_in_process = False

    def __init__(self, echo: Callable[[str], None] = print) -> None:
        self.echo = echo

    def submit(self, plans: list[RunPlan], cfg: Any, *, name: str, log_dir: Path, code: Snapshot) -> list[Submission]:
        """Submit every plan (one array job per kind of batch script when there are several), each job
        running from the code snapshot; returns once they are queued, in the plans' order."""
        cfg = cfg.model_copy(update={"setup": [*cfg.setup, *code.shell_lines()]})  # after the user's lines, which may set PYTHONPATH
        for module in _BATCH_JOB_MODULES:
            importlib.import_module(module)
        by_script: dict[str, list[RunPlan]] = {}  # backend name, or "" for submitit's own job
        for plan in plans:
            backend = plan.spec.backend.name
            by_script.setdefault(backend if backend in BATCH_JOBS else "", []).append(plan)
        done: dict[str, Submission] = {}
        for backend, group in by_script.items():
            if backend:
                subs = BATCH_JOBS[backend](group, cfg, name=name, log_dir=log_dir, echo=self.echo)
            else:
                subs = self._submitit(group, cfg, name=name, log_dir=log_dir)
            done.update((sub.key, sub) for sub in subs)
        return [done[plan.key] for plan in plans]

    def _submitit(self, plans: list[RunPlan], cfg: Any, *, name: str, log_dir: Path) -> list[Submission]:
        """Runs as submitit jobs (`SlurmJob`), one array when there are several."""
        import submitit

        params = executor_parameters(cfg, name)
        executor = submitit.AutoExecutor(folder=log_dir / "%j", cluster="slurm", slurm_max_num_timeout=params.pop("slurm_max_num_timeout"))
        executor.update_parameters(**params)
        try:
            with executor.batch():
                jobs = [executor.submit(SlurmJob(str(plan.run_dir))) for plan in plans]
        except (subprocess.SubprocessError, OSError, RuntimeError) as exc:  # sbatch missing, refused, cluster down
            detail = " ".join(str(exc).split())[:300]
            raise SweepError(f"launcher=slurm: submitting {len(plans)} job(s) failed: {detail}") from None
        out = []
        for plan, job in zip(plans, jobs):
            job_id = str(job.job_id)  # "<array>_<index>" for an array task
            array_index = int(job_id.split("_")[1]) if "_" in job_id else None
            out.append(Submission(plan.key, job_id, array_index, str(job.paths.stderr)))
        return out

    def live(self, records: dict[str, dict[str, Any]]) -> dict[str, LiveJob]:
        """Runs whose job squeue lists (pending, running, requeued...), with SLURM's restart count; one
        squeue call for all of them, which needs no accounting daemon."""
        ids = {record["job_id"]: key for key, record in records.items() if record.get("job_id")}
        if not ids:
            return {}
        # -r lists each array task on its own line; the fields hold no spaces.
        fields = "ArrayJobID:30,ArrayTaskID:30,JobID:30,State:30,RestartCnt:30"
        try:
            proc = subprocess.run(["squeue", "-h", "-r", "-O", fields], capture_output=True, text=True, timeout=60, check=True)
        except (OSError, subprocess.SubprocessError) as exc:
            raise SweepError(f"launcher=slurm: squeue failed, so job states are unknown ({type(exc).__name__})") from None
        out = {}
        for job_id, job in parse_squeue(proc.stdout).items():
            if job_id in ids:
                out[ids[job_id]] = job
        return out

    def cancel(self, job_id: str, run_dir: Path) -> str:
        """`scancel` the job (an array task alone when the id names one)."""
        try:
            proc = subprocess.run(["scancel", job_id], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as exc:
            raise SweepError(f"launcher=slurm: scancel {job_id} failed ({type(exc).__name__})") from None
        if proc.returncode:
            detail = " ".join((proc.stderr or proc.stdout).split())[:300]
            raise SweepError(f"launcher=slurm: scancel {job_id} failed: {detail}")
        return f"scancel {job_id}"


def parse_squeue(text: str) -> dict[str, LiveJob]:
    """Job id (`<array>_<index>` for an array task) -> state, from `squeue -h -r -O
    ArrayJobID,ArrayTaskID,JobID,State,RestartCnt` output; lines of another shape are skipped."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 5:
            continue
        array, task, job, state, restarts = parts
        job_id = f"{array}_{task}" if task.isdigit() else job
        out[job_id] = LiveJob(state.lower(), int(restarts) if restarts.isdigit() else None)
    return out
