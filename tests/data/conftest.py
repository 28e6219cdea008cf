from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # for helpers.py

from slca.config.groups.data import SyntheticData  # noqa: E402


@pytest.fixture(scope="session")
def small_cfg() -> SyntheticData:
    return SyntheticData(seed=3, n_sft=150, n_rl=60, n_eval=20)


@pytest.fixture(scope="session")
def synth_set(tmp_path_factory, small_cfg):
    from slca.data.synth import synthesize

    return synthesize(small_cfg, tmp_path_factory.mktemp("synth") / "set")
