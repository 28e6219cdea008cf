"""Curation on the tiny backbone (the `hf` generator) and as the `curate` pipeline stage:
a rerun is free, the stage republishes the RL split the RL stage then reads, and curate settings
enter the fingerprints of later stages exactly when the run curates."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.badinput import run_cli
from tests.data.curate_helpers import gold_calls, synthetic_rl, toy_overrides


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("curate-stage")


def test_the_tiny_backbone_curates_through_the_hf_generator_and_a_rerun_is_free(work, capsys) -> None:
    from slca.config.compose import compose_spec
    from slca.curate.cli import spec_backbone_dir

    source = work / "eight.parquet"
    pq.write_table(pq.read_table(synthetic_rl(work)).slice(0, 8), source)
    argv = ["data", "curate", source, *toy_overrides(work, 48), "--rollouts", "2", "--keep", "not_all_correct", "--batch-prompts", "3",
            "--cache", work / "cache", "--no-progress", "--json"]
    first = run_cli([*argv, "--out", work / "first", "--policy", "backbone"], capsys)
    assert first.code == 0, first.err
    funnel = json.loads(first.out)
    assert funnel["generator_calls"] > 0 and funnel["cached_batches"] == 0
    assert funnel["rows_in"] == 8 == funnel["kept"] + sum(funnel["dropped"].values()) and funnel["rolled_out"] == 8
    assert sum(funnel["histogram"].values()) == 8 and set(funnel["successes"].values()) <= {0, 1, 2}
    # The same checkpoint named by its directory is the same policy: its outcomes come from the cache.
    model_dir = spec_backbone_dir(compose_spec(toy_overrides(work)))
    again = run_cli([*argv, "--out", work / "again", "--policy", model_dir], capsys)
    assert again.code == 0, again.err
    rerun = json.loads(again.out)
    assert rerun["generator_calls"] == 0 and rerun["cached_batches"] == 3
    assert rerun["successes"] == funnel["successes"]
    assert pq.read_table(work / "again" / "rl.parquet").equals(pq.read_table(work / "first" / "rl.parquet"))


def test_the_curate_stage_republishes_the_rl_split_that_the_rl_stage_reads(work, capsys) -> None:
    from slca.backends.local.stages import read_split
    from slca.config.io import load_spec
    from slca.runcontext import RunContext
    from slca.stage_results import read_result

    run_dir = work / "run"
    argv = ["run", "experiment=embedded_smoke", *toy_overrides(work, 48), f"run.dir={run_dir}", "run.stages=[data,curate]",
            "train.curate.rollouts=1", "train.curate.keep=not_all_correct", "train.curate.max_gold_calls=1", "train.curate.batch_prompts=20"]
    result = run_cli(argv, capsys)
    assert result.code == 0, result.err
    done = json.loads((run_dir / "curate" / "result.json").read_text())
    original = pq.read_table(synthetic_rl(work)).to_pylist()
    too_many = sum(len(gold_calls(r)) > 1 for r in original)
    assert done["rows_in"] == len(original) and done["dropped"]["gold_calls"] == too_many > 0
    kept = pq.read_table(run_dir / done["rl"])
    assert kept.num_rows == done["kept"] and all(len(gold_calls(r)) <= 1 for r in kept.to_pylist())
    # What the RL stage reads for its split (the local and verl backends ask the same RunContext) is the curate stage's output.
    ctx = RunContext(load_spec(run_dir / "spec.yaml"), run_dir, None)
    for stage in ("data", "curate"):
        ctx.results.add(read_result(run_dir, stage).result)
    assert [r["extra_info"]["index"] for r in read_split(ctx, "rl")] == [r["extra_info"]["index"] for r in kept.to_pylist()]
    # A rerun reuses the finished stage; other curate settings are a different spec for this run.
    again = run_cli(argv, capsys)
    assert again.code == 0 and "[curate] already done" in again.out
    changed = run_cli([*argv, "train.curate.keep=mixed"], capsys)
    assert changed.code != 0 and "stage 'curate'" in changed.err and len(changed.err.strip().splitlines()) == 1


def test_curate_settings_enter_later_fingerprints_only_when_the_run_curates() -> None:
    from slca.config.compose import compose_spec
    from slca.pipeline import stage_fingerprint

    def prints(*overrides: str) -> dict[str, str]:
        spec = compose_spec(["logger=none", *overrides])
        return {stage: stage_fingerprint(spec, stage) for stage in spec.run.stages}

    plain = ["run.stages=[data,sft,rl,eval]"]
    curated = ["run.stages=[data,sft,curate,rl,eval]"]
    assert prints(*plain) == prints(*plain, "train.curate.keep=not_all_wrong", "train.curate.rollouts=4")
    a, b = prints(*curated), prints(*curated, "train.curate.keep=not_all_wrong")
    assert a["data"] == b["data"] and a["sft"] == b["sft"]
    assert a["curate"] != b["curate"] and a["rl"] != b["rl"] and a["eval"] != b["eval"]
    # Adding the curate stage changes what RL trains on: its fingerprint changes too.
    assert prints(*plain)["rl"] != a["rl"] and prints(*plain)["sft"] == a["sft"]
