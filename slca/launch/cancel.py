"""`slca cancel RUN_DIR|SWEEP_DIR`: stop runs' jobs through their scheduler and record it (docs/launch.md#operating-runs).

Only runs whose job the launcher still lists are stopped (SLURM: `scancel`; local: SIGTERM to the
job's process); each gets `state: cancelled` in its job record, which keeps the run resumable: a
later `slca sweep` resubmits it (`--skip-cancelled` leaves it) and the resubmitted job resumes from
the run's checkpoints. A local run still queued behind others in a running `slca sweep` is marked
cancelled and that sweep does not start it. Finished and ended runs are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from slca.launch.base import get_launcher
from slca.launch.job import read_record, record_cancelled
from slca.launch.overview import Target, targets
from slca.launch.status import FINISHED, run_status


@dataclass(frozen=True)
class Cancellation:
    """What `slca cancel` did with one run: `cancelled` (with how) or `left` (with its state)."""

    run: str
    job_id: str | None
    outcome: str
    how: str


def cancel(path: Path) -> list[Cancellation]:
    """Cancel every run of a sweep directory, or one run directory."""
    found = targets(path)
    out = []
    by_launcher: dict[str, list[Target]] = {}
    for t in found:
        by_launcher.setdefault(t.launcher, []).append(t)
    for name, group in by_launcher.items():
        launcher = get_launcher(name)
        live = launcher.live({str(t.run_dir): {"run_dir": str(t.run_dir), "job_id": t.job_id} for t in group})
        for t in group:
            entry = {"run_dir": str(t.run_dir), "job_id": t.job_id, "log": t.log}
            job = live.get(str(t.run_dir))
            state = run_status(entry, job.state if job else None).state
            job_id = t.job_id or (read_record(t.run_dir) or {}).get("job_id")  # a local sweep's job ids are in the records until it ends
            if job is not None and job_id:
                how = launcher.cancel(str(job_id), t.run_dir)
            elif job is None and name == "local" and t.sweep and not t.job_id and state != FINISHED and (t.run_dir / "spec.yaml").is_file():
                how, job_id = "marked before it started (a running local sweep skips it)", None
            else:
                out.append(Cancellation(t.name, t.job_id, "left", state if job is None else f"{state}, but no job id to cancel"))
                continue
            after = read_record(t.run_dir) or {}
            if job_id and after.get("state") in ("done", "failed") and after.get("job_id") == job_id:
                out.append(Cancellation(t.name, str(job_id), "left", f"ended ({after['state']}) before the cancellation"))
                continue
            record_cancelled(t.run_dir, str(job_id) if job_id else None)
            out.append(Cancellation(t.name, str(job_id) if job_id else None, "cancelled", how))
    return out
