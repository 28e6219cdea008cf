"""Evaluations that evaluated nothing fail: a protocol cell with no evaluated row is an error naming why
(unless eval.allow_empty_cells), a benchmark whose endpoint key is not set is refused before any model
loads, and no JSON file an evaluation writes holds NaN or Infinity."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from slca.config.compose import compose_spec
from slca.evaluation.benchmarks import BenchmarkInputs, benchmark_preflight
from slca.evaluation.harness import EmptyCellError, SeedRun, run_grid
from slca.evaluation.run import eval_rollout_config
from tests.badinput import assert_refused, run_cli, snapshot
from tests.evaluation.tiny_policy import save_tiny_policy

CORPUS = ["<|im_start|>system\nYou are a helpful assistant with tools.<|im_end|>\n<|im_start|>user\nWhat is the weather?<|im_end|>\n"] * 10
# The eval split's first three rows, one sample each, no tool round: a few seconds a run.
SMALL = ["experiment=embedded_smoke", "logger=none", "eval.limit=3", "eval.max_tokens=4", "eval.rollout.max_tool_rounds=0"]
LONGEST = re.compile(r"3 of 3 rows have a prompt over eval\.rollout\.max_prompt_length=16 tokens, the longest (\d+)")


@pytest.fixture(scope="module")
def tiny_policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_policy(tmp_path_factory.mktemp("policy"), CORPUS)


@pytest.fixture()
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # the data stage's cache and runs/ land here
    return tmp_path


def strict_load(text: str) -> Any:
    """json.loads that refuses NaN, Infinity and -Infinity (what most JSON readers do)."""
    def refuse(name: str) -> Any:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def every_json_document(run_dir: Path) -> dict[str, Any]:
    """Every .json file and every line of every .jsonl file under `run_dir`, parsed strictly."""
    found = {}
    for path in sorted(run_dir.rglob("*.json")):
        found[str(path.relative_to(run_dir))] = strict_load(path.read_text(encoding="utf-8"))
    for path in sorted(run_dir.rglob("*.jsonl")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            found[f"{path.relative_to(run_dir)}:{i + 1}"] = strict_load(line)
    return found


def test_a_cell_whose_every_prompt_is_over_the_cap_fails_naming_the_skipped_rows_the_cap_and_the_longest_prompt(
    tiny_policy: Path, work: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    run = ["eval", "--model", str(tiny_policy), *SMALL]
    refused = run_cli([*run, "eval.rollout.max_prompt_length=16", "run.dir=short"], capsys)
    assert_refused(refused, "eval cell native/keep/dataset_template", "no row evaluated", "eval.allow_empty_cells=true")
    assert not (work / "short" / "eval" / "results.json").exists()
    longest = int(LONGEST.search(refused.err).group(1))
    # Oracle for "the longest": it is the smallest cap under which no row is skipped.
    fits = run_cli([*run, f"eval.rollout.max_prompt_length={longest}", "run.dir=fits"], capsys)
    assert fits.code == 0, fits.err
    (model,) = strict_load((work / "fits" / "eval" / "results.json").read_text())["results"]
    assert model["cells"][0]["per_seed"][0]["rows"] == 3 and model["cells"][0]["per_seed"][0]["skipped_rows"] == 0
    one_short = run_cli([*run, f"eval.rollout.max_prompt_length={longest - 1}", "eval.allow_empty_cells=true", "run.dir=under"], capsys)
    (model,) = strict_load((work / "under" / "eval" / "results.json").read_text())["results"]
    assert one_short.code == 0 and model["cells"][0]["per_seed"][0]["skipped_rows"] >= 1


def test_an_allowed_empty_grid_is_recorded_as_null_with_its_reason_and_every_json_file_parses_strictly(
    tiny_policy: Path, work: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # Two seeds x two constructions, every cell empty: the per-seed means, the cell statistics, the
    # sensitivity diffs and the seed spread are all NaN in memory.
    result = run_cli(["eval", "--model", str(tiny_policy), *SMALL, "eval.rollout.max_prompt_length=16", "eval.allow_empty_cells=true",
                      "eval.seeds=[0,1]", "eval.temperature=0.5", "eval.constructions=[native,context]", "run.dir=empty"], capsys)
    assert result.code == 0, result.err
    notes = [line for line in result.out.splitlines() if "recorded as empty (eval.allow_empty_cells)" in line]
    assert len(notes) == 2 and "eval cell context/keep/dataset_template" in notes[1]
    documents = every_json_document(work / "empty")
    assert {"eval/results.json", "eval/result.json", "eval/started.json", "provenance.json", "metrics.jsonl:1"} <= set(documents)
    (model,) = documents["eval/results.json"]["results"]
    for cell in model["cells"]:
        assert cell["per_seed"] == [{**seed, "rows": 0.0, "skipped_rows": 3.0} for seed in cell["per_seed"]]
        assert all(value is None for seed in cell["per_seed"] for key, value in seed.items() if key not in ("rows", "skipped_rows"))
        success = cell["metrics"]["success"]
        assert (success["mean"], success["std"], success["n"]) == (None, None, 0)
        assert LONGEST.search(success["reason"]) and success["reason"].startswith("no row evaluated: ")
    (effect,) = model["sensitivity"]["effects"]
    assert effect["diffs"]["success"] == {"mean": None, "std": None, "n": 0, "reason": "no seed in which both cells measured it"}
    assert model["sensitivity"]["seed_spread"]["success"]["mean"] is None
    assert documents["eval/result.json"]["model/success"] is None and documents["eval/result.json"]["model/rows"] == 0
    assert "| native/keep/dataset_template | success | n/a |" in (work / "empty" / "eval" / "table.md").read_text()


@pytest.mark.parametrize(("allow", "evaluated_per_seed", "raises"), [
    (False, [0, 0], True),
    (False, [0, 2], False),  # one seed with rows is enough: the cell measured something
    (True, [0, 0], False),
])
def test_the_grid_every_benchmark_runs_through_fails_on_a_cell_no_seed_evaluated(allow: bool, evaluated_per_seed: list[int], raises: bool) -> None:
    cfg = compose_spec(["eval.seeds=[0,1]", "eval.temperature=0.5", f"eval.allow_empty_cells={str(allow).lower()}"]).eval
    inputs = BenchmarkInputs(eval_cfg=cfg, tokenizer=None, rollout_cfg=eval_rollout_config(cfg), seeds=(0, 1), split_path=None,
                             reward_cfg=None, simulator_cfg=None, progress=False)
    counts = iter(evaluated_per_seed)

    def run_cell(cell: Any, seed: int) -> SeedRun:
        n = next(counts)
        return SeedRun({"score": 1.0 if n else float("nan")}, n, "" if n else "the scripted reason")

    if raises:
        with pytest.raises(EmptyCellError, match=r"^eval cell native/keep/dataset_template: no row evaluated in any of seeds \[0, 1\] "
                                                 r"\(the scripted reason\); set eval\.allow_empty_cells=true"):
            run_grid(inputs, "test", run_cell)
        return
    (cell,) = run_grid(inputs, "test", run_cell)
    assert cell.empty == ("the scripted reason" if allow else "")


def _fake_tau2_env(root: Path) -> Path:
    """A folder that passes the τ² environment check (its interpreter file exists); nothing runs it."""
    (root / "tau2-env" / "bin").mkdir(parents=True)
    (root / "tau2-env" / "bin" / "python").write_text("")
    return root / "tau2-env"


SECRET = "sk-never-printed-0123456789"


@pytest.mark.parametrize(("env", "overrides", "mentions"), [
    ({}, [], ("eval.tau2.user.api_key_env", "OPENAI_API_KEY", "user simulator")),
    ({"SLCA_TEST_USER_KEY": ""}, ["eval.tau2.user.api_key_env=SLCA_TEST_USER_KEY"], ("eval.tau2.user.api_key_env", "SLCA_TEST_USER_KEY")),
    ({"OPENAI_API_KEY": SECRET}, ["eval.tau2.nl_assertions=true", "eval.tau2.judge.api_key_env=SLCA_TEST_JUDGE_KEY"],
     ("eval.tau2.judge.api_key_env", "SLCA_TEST_JUDGE_KEY", "judge")),
])
def test_tau2_without_an_endpoint_key_is_refused_in_one_line_before_any_model_loads_and_prints_no_secret(
    env: dict[str, str], overrides: list[str], mentions: tuple[str, ...], tiny_policy: Path, work: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    for name in ("OPENAI_API_KEY", "SLCA_TEST_USER_KEY", "SLCA_TEST_JUDGE_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    tiny_before = snapshot([tiny_policy])
    result = run_cli(["eval", "--model", str(tiny_policy), "experiment=embedded_smoke", "logger=none", "eval.benchmark=tau2", "eval.limit=1",
                      f"eval.tau2.env_dir={_fake_tau2_env(work)}", *overrides, "run.dir=tau2"], capsys)
    assert_refused(result, *mentions)
    assert "[eval] model:" not in result.out  # refused before the policy was loaded
    assert SECRET not in result.out + result.err
    assert not (work / "tau2" / "eval" / "results.json").exists() and snapshot([tiny_policy]) == tiny_before


def test_a_run_that_would_evaluate_on_tau2_without_its_key_is_refused_before_its_first_stage(
    work: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    run_dir = work / "run-tau2"
    result = run_cli(["run", "experiment=embedded_smoke", "logger=none", "eval.benchmark=tau2", f"eval.tau2.env_dir={_fake_tau2_env(work / 'run-env')}",
                      f"run.dir={run_dir}"], capsys)
    assert_refused(result, "eval.tau2.user.api_key_env", "OPENAI_API_KEY")
    assert "[data] running" not in result.out and not (run_dir / "data").exists()  # nothing trained first


def test_tau2_with_every_key_it_needs_set_or_none_needed_passes_the_check(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env = f"eval.tau2.env_dir={_fake_tau2_env(tmp_path)}"
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    benchmark_preflight(compose_spec(["eval.benchmark=tau2", env, "eval.tau2.nl_assertions=true"]).eval)
    monkeypatch.delenv("OPENAI_API_KEY")
    benchmark_preflight(compose_spec(["eval.benchmark=tau2", env, "eval.tau2.user.api_key_env=null"]).eval)
    benchmark_preflight(compose_spec([]).eval)  # toucan needs no key
