"""One embedded_smoke run shared by the end-to-end tests of this folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def slca(*args: str, cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    """Run the real `slca` command line in `cwd`, as a fresh shell would (no W&B service that an
    in-process test of this session left in the environment: the child must start its own)."""
    env = {k: v for k, v in os.environ.items() if k != "WANDB_SERVICE"}
    return subprocess.run([sys.executable, "-m", "slca.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env)


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """`slca run experiment=embedded_smoke` in a fresh directory: (run dir, finished process)."""
    work = tmp_path_factory.mktemp("smoke")
    proc = slca("run", "experiment=embedded_smoke", "run.dir=run", "train.rl.eval_every_steps=2", cwd=work)
    return work / "run", proc
