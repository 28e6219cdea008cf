"""Every shipped experiment on the verl backend dry-runs: its verl config composed into verl's own
dataclasses and checked by verl's validation, written into the run directory, the launch printed
(tests/config/test_shipped_specs.py covers the other backends)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml

from tests.launch.shipped import compose_shipped

pytestmark = [pytest.mark.slow, pytest.mark.verl]

# Shipped verl experiments whose config tests/backends/verl/test_verl_compose.py already puts through
# verl's dataclasses (a dry run costs seconds; each is paid once in the suite).
COVERED = {
    "paper_slca": "test_reference_experiments_compose_into_verls_own_config_dataclasses",
    "efficient_grpo_multi_turn": "test_reference_experiments_compose_into_verls_own_config_dataclasses",
    "verl_smoke": "test_dry_run_writes_the_composed_config_into_the_run_dir_and_prints_the_launch",
}


def test_every_shipped_verl_experiment_dry_runs_into_a_verl_config_and_the_launch_that_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from slca.app import Invocation, dry_run

    monkeypatch.chdir(tmp_path)  # the tiny backbones and synthetic data of the CPU experiments are built here
    verl = {name: spec for name, spec in compose_shipped().items() if spec.backend.name == "verl"}
    assert set(COVERED) < set(verl), "an experiment COVERED names is no verl experiment any more"
    for name, spec in verl.items():
        if name in COVERED:
            continue
        run_dir = tmp_path / name
        spec = spec.model_copy(update={"run": spec.run.model_copy(update={"dir": str(run_dir)})})
        assert dry_run(spec, Invocation(["run", "--dry-run", f"experiment={name}"])) == 0, name
        cfg = yaml.safe_load((run_dir / "rl" / "verl_config.yaml").read_text())
        assert (cfg["trainer"]["nnodes"], cfg["trainer"]["n_gpus_per_node"]) == (spec.backend.nnodes, spec.backend.n_gpus_per_node), name
        assert cfg["actor_rollout_ref"]["rollout"]["n"] == spec.train.rl.n, name
        words = shlex.split(capsys.readouterr().out.strip().splitlines()[-1])
        assert words[words.index("-m") + 1] == "verl.trainer.main_ppo" and words[words.index("--config-path") + 1] == str((run_dir / "rl").resolve()), name
        assert not (run_dir / "rl" / "checkpoints").exists(), name
