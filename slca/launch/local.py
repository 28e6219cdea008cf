"""`launcher=local`: a sweep's runs in subprocesses on this machine, `launcher.parallel` at a time.

One at a time is the default: two torch processes on a 2-core machine each run at less than half
speed. Each subprocess is `python -m slca.launch.job`, so a local run leaves the same job record as
a SLURM one; its stdout and stderr go to `<sweep_dir>/logs/<run key>.log`.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from slca.launch.base import LAUNCHERS, LiveJob, RunPlan, Submission, SweepError
from slca.launch.job import read_record
from slca.launch.snapshot import Snapshot
from slca.runlock import LOCK_NAME


@LAUNCHERS.register("local")
class LocalLauncher:
    runs_single_in_process = True

    def __init__(self, echo: Callable[[str], None] = print) -> None:
        self.echo = echo

    def submit(self, plans: list[RunPlan], cfg: Any, *, name: str, log_dir: Path, code: Snapshot) -> list[Submission]:
        """Run every plan from the code snapshot, at most `cfg.parallel` at once; returns when all have ended."""
        at_once = cfg.parallel
        since = datetime.now(timezone.utc).isoformat(timespec="seconds")
        log_dir.mkdir(parents=True, exist_ok=True)
        queue = list(plans)
        running: list[tuple[RunPlan, subprocess.Popen[bytes], Any, float]] = []
        done: list[Submission] = []
        try:
            while queue or running:
                while queue and len(running) < at_once:
                    plan = queue.pop(0)
                    if _cancelled_since(plan.run_dir, since):
                        self.echo(f"[{name}] {plan.key}: cancelled before it started")
                        continue
                    log = log_dir / f"{plan.key}.log"
                    handle = open(log, "ab")  # noqa: SIM115 - closed when the run ends
                    proc = subprocess.Popen([sys.executable, "-m", "slca.launch.job", str(plan.run_dir), str(log)],
                                            stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env={**os.environ, **code.environment()})
                    self.echo(f"[{name}] {plan.key}: started (pid {proc.pid}, log {log})")
                    running.append((plan, proc, handle, time.monotonic()))
                time.sleep(0.2)
                for entry in list(running):
                    plan, proc, handle, started = entry
                    if proc.poll() is None:
                        continue
                    handle.close()
                    running.remove(entry)
                    how = "finished" if proc.returncode == 0 else f"failed (exit {proc.returncode})"
                    self.echo(f"[{name}] {plan.key}: {how} after {time.monotonic() - started:.0f}s")
                    done.append(Submission(plan.key, f"local:{proc.pid}", None, str(log_dir / f"{plan.key}.log")))
        finally:
            for _, proc, handle, _ in running:  # interrupted: the children stop too (their runs resume later)
                proc.terminate()
                proc.wait()
                handle.close()
        return done

    def live(self, records: dict[str, dict[str, Any]]) -> dict[str, LiveJob]:
        """Runs whose directory lock is held right now: a local run holds it while it writes."""
        return {key: LiveJob("running") for key, record in records.items() if _lock_held(Path(record["run_dir"]))}

    def cancel(self, job_id: str, run_dir: Path) -> str:
        """SIGTERM to the job's process, once its command line shows it is this run's job (pids are reused)."""
        pid = int(job_id.split(":", 1)[1]) if job_id.startswith("local:") and job_id.split(":", 1)[1].isdigit() else None
        if pid is None:
            raise SweepError(f"launcher=local: {job_id!r} is not a local job id (local:<pid>)")
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return f"process {pid} already gone"
        if b"slca.launch.job" not in argv or str(run_dir).encode() not in argv:
            return f"process {pid} is no longer this run's job"
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return f"process {pid} already gone"
        return f"SIGTERM to process {pid}"


def _cancelled_since(run_dir: Path, since: str) -> bool:
    """Whether `slca cancel` marked the run cancelled after `since` (a run still queued in this process)."""
    record = read_record(run_dir) or {}
    return record.get("state") == "cancelled" and str(record.get("cancelled", "")) >= since


def _lock_held(run_dir: Path) -> bool:
    """Whether a live process holds the run's lock (probed with a shared lock, released at once)."""
    try:
        fd = os.open(run_dir / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
