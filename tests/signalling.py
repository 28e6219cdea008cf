"""Signalling a real process mid-work, bounded in time, with no process outliving the test."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def reaped(proc: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """`proc`, killed on leaving the block if it still runs (stopped ones too)."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=60)


def wait_ready(proc: subprocess.Popen[str], ready: Callable[[], Any], what: str, timeout_s: float = 120) -> Any:
    """The first true `ready()` (a path vanishing while it looks counts as not ready), while `proc` runs."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            value = ready()
        except FileNotFoundError:
            value = None
        if value:
            return value
        assert proc.poll() is None, f"the process ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"{what}: not within {timeout_s:.0f}s"
        time.sleep(0.02)


def signal_when(proc: subprocess.Popen[str], ready: Callable[[], Any], what: str, sig: int = signal.SIGTERM) -> tuple[str, str]:
    """Once `ready()` (the process is mid-work), send `sig`; (stdout, stderr) once the process has exited."""
    with reaped(proc):
        wait_ready(proc, ready, what)
        proc.send_signal(sig)
        return proc.communicate(timeout=60)
