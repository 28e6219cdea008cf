"""Every shipped experiment (conf/experiment/*.yaml), composed once for this file: validated, saved and
loaded back unchanged, its sbatch script accepted by bash when it launches on SLURM, and its backend's
dry run done, so a shipped spec cannot rot silently. verl's dry runs import verl and live beside its
other tests (tests/backends/verl/test_verl_shipped_dry_runs.py); SLURM's own check of the scripts runs
on the test cluster (tests/launch/test_shipped_sbatch.py); every run of every sweep file is composed in
tests/launch/test_sweep_files.py."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from slca.backends.contract import all_backends
from slca.config.io import dump_spec, load_spec
from tests.launch.shipped import EXPERIMENTS, compose_shipped, sbatch_script, slurm_launched

# Where each backend's dry run of the shipped experiments is exercised.
DRY_RUNS = {
    "local": "test_every_shipped_local_experiment_dry_runs_into_a_run_directory_and_prints_the_command_that_runs_it",
    "llamafactory": "test_every_shipped_llamafactory_experiment_becomes_a_train_yaml_and_a_command",
    "verl": "tests/backends/verl/test_verl_shipped_dry_runs.py",
}


@pytest.fixture(scope="module")
def shipped() -> dict[str, Any]:
    return compose_shipped()


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_a_shipped_experiment_saved_as_a_spec_loads_back_as_the_same_spec(name: str, shipped: dict[str, Any], tmp_path: Path) -> None:
    spec = shipped[name]
    assert spec.experiment == name
    path = tmp_path / "spec.yaml"
    path.write_text(dump_spec(spec), encoding="utf-8")
    assert load_spec(str(path)).model_dump(mode="json") == spec.model_dump(mode="json")


def test_every_backend_and_every_shipped_experiments_backend_has_its_dry_run_exercised(shipped: dict[str, Any]) -> None:
    assert {spec.backend.name for spec in shipped.values()} <= set(DRY_RUNS)
    assert {backend.name for backend in all_backends()} == set(DRY_RUNS)


def test_every_shipped_experiment_launched_on_slurm_renders_an_sbatch_script_that_bash_parses(shipped: dict[str, Any], tmp_path: Path) -> None:
    names = slurm_launched(shipped)
    assert {"paper_slca", "paper_sft"} <= set(names)
    for name in names:
        spec = shipped[name]
        script = tmp_path / f"{name}.sbatch"
        script.write_text(sbatch_script(spec, spec.launcher, tmp_path / name))
        check = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, timeout=30)
        assert check.returncode == 0, f"{name}: {check.stderr}"
        text = script.read_text()
        assert f"#SBATCH --nodes={spec.launcher.nodes}" in text and "export PYTHONSAFEPATH=1" in text, name


def test_every_shipped_local_experiment_dry_runs_into_a_run_directory_and_prints_the_command_that_runs_it(
    shipped: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from slca.app import Invocation, dry_run

    names = [name for name, spec in shipped.items() if spec.backend.name == "local"]
    assert {"embedded_demo", "embedded_smoke"} <= set(names)
    for name in names:
        run_dir = tmp_path / name
        spec = shipped[name].model_copy(update={"run": shipped[name].run.model_copy(update={"dir": str(run_dir)})})
        assert dry_run(spec, Invocation(["run", "--dry-run", f"experiment={name}"])) == 0
        out = capsys.readouterr().out
        assert out.splitlines()[-1] == f"slca run --spec {run_dir / 'spec.yaml'}", name
        assert load_spec(str(run_dir / "spec.yaml")).experiment == name
        assert not (run_dir / "data").exists(), "a dry run trains nothing and builds no data"


def test_every_shipped_llamafactory_experiment_becomes_a_train_yaml_and_a_command(shipped: dict[str, Any], tmp_path: Path) -> None:
    """The part of LLaMA-Factory's dry run that needs neither the run's data nor its hub checkpoint (the
    whole dry run, on a tiny run, is in tests/backends/llamafactory/test_trainargs.py)."""
    from slca.backends.llamafactory import template, trainargs

    names = [name for name, spec in shipped.items() if spec.backend.name == "llamafactory"]
    assert "paper_sft" in names
    for name in names:
        spec, stage = shipped[name], tmp_path / name / "sft"
        deepspeed = stage / "deepspeed.json" if spec.backend.deepspeed else None
        args = trainargs.train_args(spec, trainargs.Paths("base", stage / "data", stage / "model", deepspeed), template.lf_template(spec))
        assert yaml.safe_load(yaml.safe_dump(args)) == args and args["stage"] == "sft", name
        argv, _ = trainargs.command(spec, "llamafactory-cli", stage / "train.yaml")
        assert argv == ["llamafactory-cli", "train", str(stage / "train.yaml")], name
