"""A real two-run sweep (the embedded pipeline, SLCA-GRPO and GRPO) shared by the report's end-to-end tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# 8 prompts, 4 per step: every 2 steps are one epoch; 4 epochs (8 steps) give the k = 2 curve two points.
# The tiny model never succeeds, so the GRPO run counts every rollout a success (threshold 0): one run
# with all-correct prompts to plot, one without (its lines are absent, not zero).
RUN_ARGS = (
    "experiment=embedded_smoke", "logger=none", "filter=none", "data.n_sft=48", "train.sft.max_rows=48",
    "data.n_rl=8", "train.rl.prompts_per_step=4", "train.rl.epochs=4", "train.rl.max_steps=8", "train.rl.save_every_steps=0",
    "eval.limit=4",
)
STEPS_PER_EPOCH = 2


def slca(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "WANDB_SERVICE"}
    return subprocess.run([sys.executable, "-m", "slca.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=900, env=env)


@pytest.fixture(scope="session")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`sweep/slca_grpo` and `sweep/grpo`: two finished run directories side by side."""
    work = tmp_path_factory.mktemp("report_sweep")
    for estimator, extra in (("slca_grpo", ()), ("grpo", ("reward.success_threshold=0.0",))):
        proc = slca("run", *RUN_ARGS, *extra, f"estimator={estimator}", f"run.dir={work / 'sweep' / estimator}", cwd=work)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return work / "sweep"
