"""Finished stages built once and shared by every test that composes the same spec for them.

A test that needs a trained starting point (the data and SFT stages of a run) asks `StageCache.seed`
for them: they are built once, by the real `slca run`, into a folder named by the SFT stage's
fingerprint (`slca.pipeline.stage_fingerprint`: the data, seed, backbone, backend and SFT settings), so a
test whose overrides change any of those gets its own, and are copied into the test's run directory,
whose run then skips them ("already done"). The copy is the test's to change or damage.

The cache lives beside the session's temporary folders and is shared by every pytest-xdist worker: a
file lock per fingerprint makes a second worker wait for the first one's build instead of repeating it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SHARED_STAGES = ("data", "sft")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class StageCache:
    """Data and SFT stages of specs, built once per fingerprint under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def finished(self, overrides: list[str]) -> Path:
        """A run directory whose data and SFT stages finished for the spec `overrides` compose (no
        launcher or run-directory overrides: the stages are built here, by `slca run` in a subprocess)."""
        from slca.config.compose import compose_spec
        from slca.pipeline import stage_fingerprint

        key = stage_fingerprint(compose_spec([*overrides, f"run.stages=[{','.join(SHARED_STAGES)}]"]), SHARED_STAGES[-1])
        run_dir = self.root / key
        with _locked(self.root / f"{key}.lock"):
            if not (run_dir / SHARED_STAGES[-1] / "result.json").exists():
                shutil.rmtree(run_dir, ignore_errors=True)  # a build cut short by a failure is started over
                env = {k: v for k, v in os.environ.items() if k != "WANDB_SERVICE"}
                argv = [sys.executable, "-m", "slca.cli", "run", *overrides, f"run.stages=[{','.join(SHARED_STAGES)}]", f"run.dir={run_dir}", "logger=none"]
                proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1800)
                assert proc.returncode == 0, f"building the shared stages failed: {proc.stderr[-3000:]}"
        return run_dir

    def seed(self, run_dir: Path, overrides: list[str]) -> Path:
        """Copy the finished data and SFT stages of `overrides`' spec into `run_dir` (created); returns it."""
        source = self.finished(overrides)
        run_dir.mkdir(parents=True, exist_ok=True)
        for stage in SHARED_STAGES:
            shutil.copytree(source / stage, run_dir / stage)
        return run_dir


@pytest.fixture(scope="session")
def stage_cache(tmp_path_factory: pytest.TempPathFactory) -> StageCache:
    """The session's stage cache; under pytest-xdist every worker gets the same folder (the parent of
    the workers' own temporary folders)."""
    base = tmp_path_factory.getbasetemp()
    return StageCache((base.parent if "PYTEST_XDIST_WORKER" in os.environ else base) / "shared-stages")
