"""SIGKILL during RL, run the same command again: it resumes and ends bit-identical to an uninterrupted run."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.pipeline.conftest import slca

# Full embedded runs (real tiny model, SFT, RL, eval): not in `make test-fast`.
pytestmark = pytest.mark.slow

RL_ARGS = ("run.stages=[data,sft,rl]", "train.rl.max_steps=3", "train.rl.save_every_steps=1", "logger=none")


def _fork_after_sft(smoke: Path, target: Path) -> Path:
    """A copy of the smoke run with its data and SFT stages done and no RL yet."""
    shutil.copytree(smoke, target, ignore=shutil.ignore_patterns("rl", "eval", "wandb", "metrics.jsonl"))
    return target


def test_rl_resume_after_sigkill_is_bit_identical(smoke_run: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    smoke, proc = smoke_run
    assert proc.returncode == 0, proc.stderr[-2000:]
    straight = _fork_after_sft(smoke, tmp_path / "straight")
    killed = _fork_after_sft(smoke, tmp_path / "killed")

    done = slca("run", "--spec", str(straight / "spec.yaml"), f"run.dir={straight}", *RL_ARGS, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]

    command = [sys.executable, "-m", "slca.cli", "run", "--spec", str(killed / "spec.yaml"), f"run.dir={killed}", *RL_ARGS]
    victim = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while not list((killed / "rl" / "checkpoints").glob("step_*")):
        assert victim.poll() is None, "the run ended before its first RL checkpoint"
        assert time.monotonic() < deadline, "no RL checkpoint within 10 minutes"
        time.sleep(0.2)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    assert not (killed / "rl" / "result.json").exists()

    resumed = slca("run", "--spec", str(killed / "spec.yaml"), f"run.dir={killed}", *RL_ARGS, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    summary = (killed / "rl" / "summary.json").read_text()
    assert '"resumed": true' in summary
    a = (straight / "rl" / "model" / "model.safetensors").read_bytes()
    b = (killed / "rl" / "model" / "model.safetensors").read_bytes()
    assert a == b, "resumed run differs from the uninterrupted one"
    records = [json.loads(line) for line in (killed / "metrics.jsonl").read_text().splitlines()]
    steps = [r["step"] for r in records if r["stage"] == "rl" and not any(k.startswith("filter/") for k in r)]
    assert steps == [1, 2, 3], f"each RL step logged once after the resume, got {steps}"
