"""A finished run directory (its data stage done, on a small synthetic set) that tests copy and damage."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from slca.cli import main

SMALL = ("experiment=embedded_smoke", "logger=none", "data.n_sft=20", "data.n_rl=10", "data.n_eval=5")


@pytest.fixture(scope="session")
def data_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`slca run ... run.stages=[data]` finished once; its data cache lives beside it."""
    root = tmp_path_factory.mktemp("data_run")
    run_dir = root / "run"
    code = main(["run", *SMALL, "run.stages=[data]", f"run.dir={run_dir}", f"data.cache_dir={root / 'cache'}"])
    assert code == 0 and (run_dir / "data" / "result.json").is_file()
    return run_dir


@pytest.fixture
def run_copy(data_run: Path, tmp_path: Path) -> Path:
    """A private copy of `data_run` (same cache) for a test to damage."""
    return Path(shutil.copytree(data_run, tmp_path / "run"))
