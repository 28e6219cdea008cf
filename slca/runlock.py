"""An exclusive lock on a run directory, held while a run writes into it.

`fcntl.flock` on an open file: the kernel drops the lock when its holder exits, however it exits
(SIGKILL included), so a dead holder never blocks the next run. The holder's pid, host and start
time are written into the lock file only so that a refused run can say who holds it; a record left
by a dead process on this host is reported as stale and taken over.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from slca.fileio import pid_alive

LOCK_NAME = "run.lock"


class RunLocked(RuntimeError):
    """Another live process holds the run directory's lock."""


def _read_holder(path: Path) -> dict[str, Any]:
    try:
        holder = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def _describe(holder: dict[str, Any]) -> str:
    if not holder.get("pid"):
        return "another process"
    return f"pid {holder['pid']} on host {holder.get('host', '?')} (since {holder.get('since', '?')})"


class RunLock:
    """`with RunLock(run_dir):` — exclusive, non-blocking; raises RunLocked at once when held."""

    def __init__(self, run_dir: str | os.PathLike[str], *, note: Callable[[str], None] = print) -> None:
        self.path = Path(run_dir) / LOCK_NAME
        self._note = note
        self._fd: int | None = None

    def acquire(self) -> "RunLock":
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise RunLocked(
                    f"run directory {self.path.parent} is in use by {_describe(_read_holder(self.path))} "
                    f"(lock file {self.path}); wait for that run to end, or use another run.dir"
                ) from None
            raise
        previous = _read_holder(self.path)
        here = socket.gethostname()
        if previous.get("pid") and previous.get("host") == here and not pid_alive(int(previous["pid"])):
            self._note(f"slca: taking over a stale lock on {self.path.parent} left by pid {previous['pid']} (no longer running)")
        record = {"pid": os.getpid(), "host": here, "since": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)  # a clean exit leaves no holder record behind
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
