"""The real one-node SLURM cluster of the tests (scripts/slurm_test_cluster.sh), started at most once
per session by whichever test asks first and stopped by PID at the end, and helpers to read its jobs.

A pytest plugin (tests/conftest.py lists it) rather than a conftest fixture: the launching tests and
verl's SLURM smoke test both use it, and a second cluster would collide on the first one's ports."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "slurm_test_cluster.sh"


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """SLURM_CONF of a running one-node cluster (slurmctld + slurmd on loopback, munged)."""
    state = tmp_path_factory.mktemp("slurm")
    started = time.monotonic()
    proc = subprocess.run(["bash", str(SCRIPT), "start", str(state)], capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, f"the test cluster did not start: {proc.stderr[-2000:]}"
    print(f"slurm test cluster up in {time.monotonic() - started:.1f}s")
    patch = pytest.MonkeyPatch()
    patch.setenv("SLURM_CONF", str(state / "slurm.conf"))  # sbatch, squeue, scontrol (and the jobs) find it here
    try:
        yield state / "slurm.conf"
    finally:
        patch.undo()
        subprocess.run(["bash", str(SCRIPT), "stop", str(state)], capture_output=True, text=True, timeout=120)


def scontrol(*args: str) -> str:
    return subprocess.run(["scontrol", *args], capture_output=True, text=True, check=True, timeout=60).stdout


def job_field(job_id: str, field: str) -> str:
    """One `Field=value` of `scontrol show job` (empty once the job is gone)."""
    try:
        text = scontrol("show", "job", "-o", job_id)
    except subprocess.CalledProcessError:
        return ""
    for token in text.split():
        key, _, value = token.partition("=")
        if key == field:
            return value
    return ""


def wait_until(predicate, what: str, timeout_s: float = 900, poll_s: float = 0.5):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout_s:.0f}s waiting for {what}"
        time.sleep(poll_s)
