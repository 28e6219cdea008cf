"""Fixtures of the launching tests: the toy run every launched job runs and the caches its runs
share. The SLURM cluster fixture and its helpers live in tests/launch/cluster.py (a session plugin)."""

from __future__ import annotations

import pytest

from tests.launch.cluster import job_field, scontrol, wait_until

__all__ = ["SLURM", "TOY", "job_field", "scontrol", "wait_until"]

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
