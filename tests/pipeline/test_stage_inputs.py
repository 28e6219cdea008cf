"""A stage gets the data stage's splits when the run does not list that stage (`paper_slca` runs
only [rl, eval]): from the data stage's finished result in the run directory, else from the spec.

The backend's RL stage is replaced by one that records which files it would read, so no engine runs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from slca.backends.contract import get_backend
from slca.config.compose import compose_spec
from slca.pipeline import run_pipeline, stage_fingerprint
from slca.runcontext import RunContext
from slca.stage_results import EvalResult, RlResult

SEEN: dict[str, Path] = {}


def record_splits(ctx: RunContext) -> RlResult:
    SEEN.update({split: ctx.split_path(split) for split in ("sft", "rl", "eval")})
    return RlResult(model_dir="rl/model")


def record_eval_splits(ctx: RunContext) -> EvalResult:
    record_splits(ctx)
    return EvalResult(results="eval/results.json", table="eval/table.md")


@pytest.fixture
def rl_only(monkeypatch: pytest.MonkeyPatch) -> None:
    SEEN.clear()
    recording = replace(get_backend("verl"), stages={"rl": f"{__name__}:record_splits"})
    monkeypatch.setattr("slca.backends.contract.get_backend", lambda name: recording)


def _run(overrides: list[str], run_dir: Path) -> None:
    spec = compose_spec(["experiment=paper_slca", "launcher=local", "logger=none", f"run.dir={run_dir}", "run.stages=[rl]", *overrides])
    run_pipeline(spec, run_dir, tracker=None, echo=lambda line: None)


def test_the_rl_stage_of_a_run_without_the_data_stage_reads_the_configured_toucan_files(rl_only: None, tmp_path: Path) -> None:
    files = {split: tmp_path / f"{split}.parquet" for split in ("sft", "rl", "eval")}
    _run([f"data.{split}_path={path}" for split, path in files.items()], tmp_path / "run")
    assert SEEN == files


def test_a_finished_data_stage_in_the_run_directory_is_read_when_the_run_does_not_list_it(rl_only: None, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    spec = compose_spec(["experiment=paper_slca", "launcher=local", f"run.dir={run_dir}"])
    # What a data stage in skip mode records: the valid rows it kept inside the run directory.
    kept = {"sft": "data/sft.parquet", "rl": "data/rl.parquet", "eval": "data/eval.parquet"}
    (run_dir / "data").mkdir(parents=True)
    (run_dir / "data" / "result.json").write_text(json.dumps({**kept, "fingerprint": stage_fingerprint(spec, "data")}))
    _run([], run_dir)
    assert SEEN == {split: run_dir / path for split, path in kept.items()}


# The evaluation harness's place, for the test below: its `STAGES` is what the pipeline's eval stage loads.
STAGES = {"eval": record_eval_splits}


def test_the_eval_stage_of_a_run_without_the_data_stage_reads_the_configured_files_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    SEEN.clear()
    monkeypatch.setattr("slca.pipeline.EVAL_MODULE", __name__)
    files = {split: tmp_path / f"{split}.parquet" for split in ("sft", "rl", "eval")}
    _run(["run.stages=[eval]", *(f"data.{split}_path={path}" for split, path in files.items())], tmp_path / "run")
    assert SEEN == files
