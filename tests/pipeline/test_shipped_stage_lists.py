"""Every shipped experiment's stage list runs in one process (`slca run --here`, what a launched job
runs) on its backend's CPU spec with the tiny backbone: a stage gets what it needs from the spec or
from a declared earlier stage, so `paper_slca`'s [rl, eval], with no data stage, runs end to end.

A stage list that another test already runs end to end on CPU is named with that test (as the dry
runs are in tests/config/test_shipped_specs.py); the one no other test runs is run here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from slca.config.compose import compose_spec
from slca.stage_results import EvalResult, RlResult, read_result
from tests.launch.shipped import compose_shipped

REPO = Path(__file__).resolve().parents[2]
# Each backend's CPU spec: the tiny backbone on the synthetic set, sized for a test.
CPU_SPECS = {
    "local": ["experiment=embedded_smoke"],
    "verl": ["experiment=verl_smoke"],
    "llamafactory": ["experiment=embedded_smoke", "backend=llamafactory"],
}
# (backend, stage list) -> the test that runs that list on the backend's CPU spec.
RUN_BY = {
    ("local", ("data", "sft", "rl", "eval")): "tests/pipeline/test_embedded_smoke.py",
    ("local", ("data", "sft", "rl")): "tests/learning/test_learning_check.py",
    ("verl", ("data", "rl")): "tests/backends/verl/test_verl_run_on_cpu.py",
    ("verl", ("data", "sft", "rl")): "tests/launch/test_verl_ray_jobs.py",
    ("verl", ("rl", "eval")): "tests/pipeline/test_shipped_stage_lists.py",
    ("llamafactory", ("data", "sft")): "tests/backends/llamafactory/test_sft_on_cpu.py",
}


def test_every_shipped_experiments_stage_list_composes_on_its_backends_cpu_spec_and_a_named_test_runs_it() -> None:
    lists = {(spec.backend.name, tuple(spec.run.stages)) for spec in compose_shipped().values()}
    assert ("verl", ("rl", "eval")) in lists  # paper_slca's, the form a SLURM job runs
    assert lists <= set(RUN_BY), sorted(lists - set(RUN_BY))
    for backend, stages in lists:
        spec = compose_spec([*CPU_SPECS[backend], f"run.stages=[{','.join(stages)}]"])
        assert (spec.backend.name, tuple(spec.run.stages), spec.backbone.kind) == (backend, stages, "tiny")
        assert (REPO / RUN_BY[backend, stages]).is_file()


@pytest.mark.slow
@pytest.mark.verl
def test_a_verl_run_of_rl_and_eval_without_the_data_stage_trains_on_the_specs_split_and_evaluates_the_trained_policy(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "slca.cli", "run", "--here", *CPU_SPECS["verl"], "run.stages=[rl,eval]",
            "train.rl.max_steps=1", "eval.limit=4", "run.dir=run"]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = tmp_path / "run"
    assert not (run_dir / "data").exists()  # the split came from the spec's synthetic set, not a data stage
    rl, evaluation = read_result(run_dir, "rl"), read_result(run_dir, "eval")
    assert rl is not None and isinstance(rl.result, RlResult) and (run_dir / rl.result.model_dir / "config.json").is_file()
    assert evaluation is not None and isinstance(evaluation.result, EvalResult)
    assert evaluation.result.headline and all(key.startswith("rl/") for key in evaluation.result.headline)
