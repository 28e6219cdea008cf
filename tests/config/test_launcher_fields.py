"""Launcher fields are launcher-specific: an experiment written for SLURM composes with another launcher."""

from __future__ import annotations

import pytest

from slca.config.compose import compose_spec
from slca.config.errors import SpecError


def test_an_experiment_written_for_slurm_runs_with_launcher_local_and_a_misspelt_launcher_key_is_still_refused() -> None:
    spec = compose_spec(["experiment=paper_slca", "launcher=local"])
    assert spec.launcher.model_dump() == {"name": "local", "parallel": 1}
    assert compose_spec(["experiment=paper_slca"]).launcher.nodes == 4  # its own launcher keeps them
    with pytest.raises(SpecError, match=r"^config error at launcher\.nodez: unknown key"):
        compose_spec(["experiment=paper_slca", "launcher=local", "launcher.nodez=2"])
