"""What a launched run executes: `slca run --here --spec <run_dir>/spec.yaml` in this process, with its
outcome recorded in `<run_dir>/job.json` (docs/launch.md#run-records).

The record says which job ran the run, where its log is, and how it ended: `running` while it goes,
then `done`, or `failed` with the one error line slca printed (the application's outcome, slca/app.py). A job killed outright (SIGKILL,
node failure) or stopped by SIGTERM (a requeue, preemption or time limit) leaves `running` behind;
`slca results` then asks the launcher whether the job is still alive. `slca cancel` writes `cancelled`.
Every attempt (a requeue of the same job, or a resubmission) is listed in `attempts` with the size
its log had when it started, so `slca logs --attempt N` shows that attempt's part of the log. `python -m slca.launch.job
RUN_DIR LOG [JOB_ID]` is the local launcher's subprocess and what the Ray job of a verl run
executes on its head node (SLURM/verl_ray_job.sbatch).
"""

from __future__ import annotations

import os
import socket
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from slca.app import Outcome, run_launched_spec
from slca.fileio import atomic_write_json
from slca.signals import EXIT_TERMINATED

RECORD = "job.json"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def read_record(run_dir: Path) -> dict[str, Any] | None:
    """The run's job record, or None when there is none (or it is unreadable)."""
    import json

    try:
        record = json.loads((run_dir / RECORD).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def record_cancelled(run_dir: Path, job_id: str | None) -> None:
    """Mark the run cancelled (by `slca cancel`): the record keeps its attempts; the next attempt replaces the state."""
    previous = read_record(run_dir) or {}
    atomic_write_json(Path(run_dir) / RECORD, {**previous, "state": "cancelled", "cancelled": _now(), "cancelled_job": job_id})


def run_job(run_dir: Path, *, job_id: str, log: str) -> Outcome:
    """Run the run directory's spec here and record how it ended."""
    run_dir = Path(run_dir)
    previous = read_record(run_dir) or {}
    attempt, started = int(previous.get("attempt", 0)) + 1, _now()
    # Attempts of this job id: a requeue keeps the id, a resubmission starts a new one.
    job_attempt = int(previous.get("job_attempt", 1)) + 1 if previous.get("job_id") == job_id else 1
    attempts = [a for a in previous.get("attempts", []) if isinstance(a, dict)] if isinstance(previous.get("attempts"), list) else []
    attempts.append({"attempt": attempt, "job_id": job_id, "log": log, "offset": _size(log), "started": started})
    record = {"state": "running", "job_id": job_id, "log": log, "host": socket.gethostname(), "started": started,
              "attempt": attempt, "job_attempt": job_attempt, "attempts": attempts}
    atomic_write_json(run_dir / RECORD, record)
    outcome = run_launched_spec(run_dir / "spec.yaml")
    if outcome.code == EXIT_TERMINATED:
        # Stopped from outside (SLURM requeue, preemption, time limit, scancel, `kill`): the run is not
        # over, so the record keeps saying `running`, as for a job killed outright; the launcher says
        # whether the job lives on, and a requeued attempt writes its own record.
        return outcome
    state = "done" if outcome.code == 0 else "failed"
    atomic_write_json(run_dir / RECORD, {**record, "state": state, "rc": outcome.code, "error": outcome.error, "ended": _now()})
    return outcome


def _main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print("usage: python -m slca.launch.job RUN_DIR LOG [JOB_ID]", file=sys.stderr)
        return 2
    job_id = argv[2] if len(argv) == 3 else f"local:{os.getpid()}"
    return run_job(Path(argv[0]), job_id=job_id, log=argv[1]).code


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
