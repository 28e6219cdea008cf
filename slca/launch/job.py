"""What a launched run executes: `slca run --here --spec <run_dir>/spec.yaml` in this process, with its
outcome recorded in `<run_dir>/job.json` (docs/launch.md#run-records).

The record says which job ran the run, where its log is, and how it ended: `running` while it goes,
then `done`, or `failed` with the one error line slca printed. A job killed outright (SIGKILL,
node failure) or stopped by SIGTERM (a requeue, preemption or time limit) leaves `running` behind;
`slca results` then asks the launcher whether the job is still alive. `python -m slca.launch.job
RUN_DIR LOG [JOB_ID]` is the local launcher's subprocess and what the Ray job of a verl run
executes on its head node (SLURM/verl_ray_job.sbatch).
"""

from __future__ import annotations

import contextlib
import io
import socket
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from slca.fileio import atomic_write_json
from slca.signals import EXIT_TERMINATED

RECORD = "job.json"


class _LastLine(io.TextIOBase):
    """Passes writes through to `stream` and remembers the last non-empty line written."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.last = ""
        self._pending = ""

    def write(self, text: str) -> int:
        self.stream.write(text)
        self._pending += text
        lines = self._pending.split("\n")
        self._pending = lines.pop()
        for line in reversed(lines):
            if line.strip():
                self.last = line.strip()
                break
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def last_line(self) -> str:
        return self._pending.strip() or self.last


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


def run_job(run_dir: Path, *, job_id: str, log: str) -> tuple[int, str]:
    """Run the run directory's spec here; (exit code, the error line or "")."""
    from slca.cli import main

    run_dir = Path(run_dir)
    previous = read_record(run_dir) or {}
    record = {"state": "running", "job_id": job_id, "log": log, "host": socket.gethostname(), "started": _now(),
              "attempt": int(previous.get("attempt", 0)) + 1}
    atomic_write_json(run_dir / RECORD, record)
    tee = _LastLine(sys.stderr)
    with contextlib.redirect_stderr(tee):  # type: ignore[type-var]
        code = main(["run", "--here", "--spec", str(run_dir / "spec.yaml")])
    if code == EXIT_TERMINATED:
        # Stopped from outside (SLURM requeue, preemption, time limit, scancel, `kill`): the run is not
        # over, so the record keeps saying `running`, as for a job killed outright; the launcher says
        # whether the job lives on, and a requeued attempt writes its own record.
        return code, tee.last_line()
    error = tee.last_line() if code else ""
    atomic_write_json(run_dir / RECORD, {**record, "state": "done" if code == 0 else "failed", "rc": code, "error": error, "ended": _now()})
    return code, error


def _main(argv: list[str]) -> int:
    import os

    if len(argv) not in (2, 3):
        print("usage: python -m slca.launch.job RUN_DIR LOG [JOB_ID]", file=sys.stderr)
        return 2
    job_id = argv[2] if len(argv) == 3 else f"local:{os.getpid()}"
    code, _ = run_job(Path(argv[0]), job_id=job_id, log=argv[1])
    return code


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
