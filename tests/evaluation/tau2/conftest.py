"""Fixture for the τ²-bench tests: τ²'s own environment, built once by `make tau2-env` and cached under .cache/tau2-env."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def tau2_python() -> Path:
    """τ²'s interpreter, its environment built by the repository's Makefile target on first use (about 2 min), then reused."""
    proc = subprocess.run(["make", "-s", "-C", str(ROOT), "tau2-env"], capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    from slca.config.tau2 import Tau2Eval
    from slca.evaluation.tau2.job import env_python

    return env_python(Tau2Eval())

