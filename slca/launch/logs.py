"""`slca logs RUN_DIR [-f] [--attempt N]`: a run's job log, one attempt of it, or followed while the
job runs (docs/launch.md#operating-runs).

A requeued job appends each attempt to the same log (SLURM's `--open-mode=append`; the local
launcher opens it for appending); a resubmitted run gets a new job and a new log. The job record
lists every attempt with its log and the log's size when it started, so an attempt is the bytes
from its offset to the next attempt's in the same file (what the scheduler printed before slca
started counts with the previous attempt). Following stops once the launcher no longer lists the
job, after printing what the job wrote last.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from slca.launch.base import SweepError
from slca.launch.job import read_record
from slca.launch.overview import Target

CHUNK = 1 << 16


@dataclass(frozen=True)
class Attempt:
    """One attempt of the run's jobs: its number, job id, log, and where in that log it starts and ends (None: the end)."""

    number: int
    job_id: str
    log: str
    start: int
    end: int | None


def attempts(record: dict[str, object]) -> list[Attempt]:
    """The attempts a job record lists, each bounded by the next one in the same log."""
    listed = record.get("attempts")
    raw = [a for a in listed if isinstance(a, dict) and a.get("log")] if isinstance(listed, list) else []
    if not raw and record.get("log"):  # a record written before attempts were listed: one attempt, the whole log
        raw = [{"attempt": record.get("attempt", 1), "job_id": record.get("job_id", ""), "log": record["log"], "offset": 0}]
    out = []
    for i, a in enumerate(raw):
        later = [b for b in raw[i + 1:] if b["log"] == a["log"]]
        start = int(a.get("offset") or 0)
        out.append(Attempt(int(a.get("attempt") or i + 1), str(a.get("job_id") or ""), str(a["log"]), start,
                           int(later[0].get("offset") or 0) if later else None))
    return out


def pick(target: Target, number: int | None) -> Attempt:
    """The attempt to show: `number`, or the latest (the submitted job's log when no attempt has started yet)."""
    listed = attempts(read_record(target.run_dir) or {})
    if number is not None:
        for attempt in listed:
            if attempt.number == number:
                return attempt
        have = ", ".join(str(a.number) for a in listed) or "none yet"
        raise SweepError(f"{target.run_dir}: no attempt {number} (attempts: {have})")
    latest = listed[-1] if listed else None
    if target.job_id and (latest is None or latest.job_id != target.job_id) and target.log:
        return Attempt(len(listed) + 1, target.job_id, target.log, 0, None)  # submitted, not started yet
    if latest is None:
        raise SweepError(f"{target.run_dir}: no job log (the run was never launched as a job: its output went to a terminal)")
    return latest


def _copy(handle: BinaryIO, end: int | None, out: BinaryIO) -> int:
    """Copy from the handle's position to `end` (or the file's current end); bytes copied."""
    copied = 0
    while end is None or handle.tell() < end:
        data = handle.read(CHUNK if end is None else min(CHUNK, end - handle.tell()))
        if not data:
            break
        out.write(data)
        copied += len(data)
    out.flush()
    return copied


def show(attempt: Attempt, out: BinaryIO, *, follow: bool = False, alive: Callable[[], bool] = lambda: False,
         poll_s: float = 0.25, check_s: float = 1.0) -> None:
    """Write the attempt's part of its log to `out`; with `follow`, keep writing what is appended
    until `alive()` (asked every `check_s`) says the job has ended. A log not written yet is waited for."""
    path = Path(attempt.log)
    next_check = 0.0
    while follow and not path.exists():
        if time.monotonic() >= next_check:
            if not alive():
                raise SweepError(f"{path}: no such log, and the job is not queued or running")
            next_check = time.monotonic() + check_s
        time.sleep(poll_s)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise SweepError(f"{path}: cannot read the log ({exc.strerror or type(exc).__name__})") from None
    with handle:
        handle.seek(min(attempt.start, os.fstat(handle.fileno()).st_size))
        _copy(handle, attempt.end, out)
        if not follow or attempt.end is not None:
            return
        while True:
            if time.monotonic() >= next_check:
                ended = not alive()
                _copy(handle, None, out)
                if ended:
                    return
                next_check = time.monotonic() + check_s
            if not _copy(handle, None, out):
                time.sleep(poll_s)
