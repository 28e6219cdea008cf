"""Fixtures of the launching tests: a real one-node SLURM cluster (scripts/slurm_test_cluster.sh),
started once per session and stopped by PID at the end, and the toy run every launched job runs."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "slurm_test_cluster.sh"

# The embedded pipeline at its smallest: seconds per run on an idle 2-core machine.
TOY = ["experiment=embedded_smoke", "data.n_sft=40", "data.n_rl=16", "data.n_eval=4", "train.sft.max_rows=40", "train.sft.batch_size=8",
       "train.sft.micro_batch_size=4", "train.rl.max_steps=3", "train.rl.prompts_per_step=2", "train.rl.mini_batch_prompts=2", "train.rl.n=2",
       "train.rl.max_response_length=48", "eval.limit=2"]
# One CPU per job (two jobs at once on the 2-CPU node), no GPU, generous limits.
SLURM = ["launcher=slurm", "launcher.cpus_per_task=1", "launcher.gpus_per_node=0", "launcher.time_min=30", "launcher.array_parallelism=2"]


@pytest.fixture(scope="session")
def caches(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Data and backbone caches shared by every run of the session (built once, read by all)."""
    root = tmp_path_factory.mktemp("launch-cache")
    return [f"data.cache_dir={root / 'data'}", f"backbone.cache_dir={root / 'backbones'}"]


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
