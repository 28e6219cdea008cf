"""SIGTERM (what `kill`, `timeout` and SLURM send) ends `slca` as Ctrl-C does: one line, exit 143,
cleanups run, and a child process stops with its parent. Real processes, real signals."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.signalling import signal_when

# The data stage synthesises this many SFT rows into its cache: seconds of work, so a signal lands mid-write.
BIG_DATA = ["experiment=embedded_smoke", "run.stages=[data]", "logger=none", "data.n_sft=20000"]


def _temporaries(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp")] if folder.is_dir() else []


def test_slca_run_sent_sigterm_mid_write_exits_143_with_one_line_releases_its_lock_and_leaves_no_temporary(tmp_path: Path) -> None:
    run_dir, cache = tmp_path / "run", tmp_path / "cache"
    proc = subprocess.Popen([sys.executable, "-m", "slca.cli", "run", *BIG_DATA, f"run.dir={run_dir}", f"data.cache_dir={cache}"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = signal_when(proc, lambda: any(any(t.iterdir()) for t in _temporaries(cache)), "the data stage writing its splits")
    assert proc.returncode == 143, err
    assert err.splitlines() == ["slca: terminated"]
    assert f"slca: run directory {run_dir}" in out
    assert os.listdir(cache) == [], "the half-written split folder is gone"
    assert not (run_dir / "data" / "result.json").exists()
    with open(run_dir / "run.lock", "rb") as lock:  # released: a next run may take it
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert lock.read() == b"", "no holder record left behind"


PARENT = textwrap.dedent("""
    import subprocess, sys
    from pathlib import Path
    from slca.backends.llamafactory.runner import run_streamed
    from slca.signals import EXIT_TERMINATED, Terminated, terminate_raises, wait_child

    how, pid_file = sys.argv[1], sys.argv[2]
    child = [sys.executable, "-c", "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(300)", pid_file]
    with terminate_raises():
        try:
            if how == "run_streamed":
                run_streamed(child, {}, Path(pid_file).with_suffix(".log"), echo=lambda line: None)
            else:
                wait_child(subprocess.Popen(child))
        except Terminated:
            sys.exit(EXIT_TERMINATED)
""")


@pytest.mark.parametrize("runner", ["run_streamed", "wait_child"], ids=["LLaMA-Factory's runner", "verl's launch"])
def test_a_child_process_stops_with_its_parent_when_only_the_parent_is_sent_sigterm(runner: str, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, runner, str(pid_file)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # SIGTERM to the parent alone, as `kill PARENT` sends it: the child is not signalled.
        _, err = signal_when(parent, lambda: pid_file.read_text().strip(), "the child starting")
    finally:
        child = int(pid_file.read_text() or 0) if pid_file.is_file() else 0
        orphaned = child and Path(f"/proc/{child}").exists()
        if orphaned:
            os.kill(child, signal.SIGKILL)  # no process outlives the test
    assert parent.returncode == 143, err
    assert not orphaned, "the child was stopped and reaped with its parent"
