"""How slca stops when it is asked to: SIGTERM (what `kill`, `timeout` and SLURM send) ends a
command the way Ctrl-C does, and a child process stops with its parent.

`terminate_raises()` turns SIGTERM into `Terminated`, a BaseException raised in the main thread as
SIGINT raises KeyboardInterrupt, so every `except BaseException:` and `finally` cleanup (temporary
files, run locks, child processes) runs before the command exits with `EXIT_TERMINATED`.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the entry imports this module on every command: no subprocess import for a type
    import subprocess

EXIT_TERMINATED = 128 + signal.SIGTERM  # 143, what a shell reports for a process SIGTERM ended
# A child asked to stop gets this long to clean up before it is killed: below SLURM's default
# KillWait (30 s), after which SLURM kills the whole job anyway.
CHILD_GRACE_S = 20.0


class Terminated(BaseException):
    """SIGTERM arrived (a BaseException, so `except Exception` handlers let it through)."""


def _raise_terminated(signum: int, frame: Any) -> None:
    # Further SIGTERMs (a process group signalled twice, a child's parent forwarding its own) must not
    # cut short the cleanup this one starts; SIGKILL still ends the process.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated()


@contextmanager
def terminate_raises() -> Iterator[None]:
    """Inside the block, SIGTERM raises `Terminated`; the previous handler is restored on exit (slca's
    entry is also called in-process: by a launched job under submitit, and by tests). Signal handlers
    belong to the main thread, so elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def stop_child(proc: subprocess.Popen[Any], grace_s: float = CHILD_GRACE_S) -> None:
    """Ask a running child to stop (SIGTERM), give it `grace_s` to clean up, then kill it.

    A child signalled only through its parent (`kill PID`, as opposed to Ctrl-C or SLURM, which
    signal the whole process group) would otherwise go on running with nobody reading its output."""
    if proc.poll() is not None:
        return
    try:
        proc.terminate()
        proc.wait(timeout=grace_s)
    except BaseException:  # the grace ran out, or a second Ctrl-C: no more waiting
        proc.kill()
        proc.wait()


def wait_child(proc: subprocess.Popen[Any]) -> int:
    """`proc.wait()`; when this process is interrupted or terminated meanwhile, the child stops too."""
    try:
        return proc.wait()
    except BaseException:
        stop_child(proc)
        raise
