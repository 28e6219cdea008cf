"""`slca eval`: one real evaluation of a saved tiny policy over a small grid (results.json with its
protocol card, table.md, the sensitivity table), the seed rules, and its refusals."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from slca.config.compose import compose_spec
from slca.evaluation.harness import CellResult, ProtocolCell, cell_result, effective_seeds
from slca.evaluation.report import fmt, fmt_diff
from slca.evaluation.sensitivity import factor_effects, seed_spread
from slca.rewards.metrics import MeanStd
from tests.badinput import assert_refused, run_cli, snapshot
from tests.evaluation.tiny_policy import save_tiny_policy

CORPUS = ["<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n"
          '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n'] * 10


@pytest.fixture(scope="module")
def tiny_policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny real Qwen3 model and tokenizer, saved the way the sft and rl stages save theirs."""
    return save_tiny_policy(tmp_path_factory.mktemp("policy"), CORPUS)


GRID = ["experiment=embedded_smoke", "logger=none", "eval.seeds=[3,5]", "eval.constructions=[native,context]", "eval.temperature=0.8",
        "eval.limit=3", "eval.max_tokens=12", "eval.rollout.max_response_length=40", "eval.rollout.max_tool_rounds=1",
        "eval.rollout.max_assistant_turns=2", "train.rl.max_response_length=9"]


@pytest.fixture(scope="module")
def evaluated(tiny_policy: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """`slca eval --model` on the tiny policy over 2 seeds x 2 constructions (run in-process)."""
    import os

    from slca.cli import main

    work = tmp_path_factory.mktemp("evalrun")
    cwd = os.getcwd()
    os.chdir(work)  # runs/ and .cache/ land here
    try:
        code = main(["eval", "--model", str(tiny_policy), *GRID, "run.dir=ev"])
    finally:
        os.chdir(cwd)
    assert code == 0
    return work / "ev", str(tiny_policy)


def test_slca_eval_writes_results_with_a_complete_protocol_card(evaluated: tuple[Path, str]) -> None:
    run_dir, model_dir = evaluated
    record = json.loads((run_dir / "eval" / "results.json").read_text())
    assert record["schema_version"] == 2
    (result,) = record["results"]
    card = result["card"]
    weights = hashlib.sha256(b"model.safetensors\0" + (Path(model_dir) / "model.safetensors").read_bytes()).hexdigest()
    assert card["model"] == {"label": "model", "path": str(Path(model_dir).resolve()), "weights_sha256": weights, "generator": "hf",
                             "endpoint": None, "served_model": None}
    data = Path(card["data"]["path"])
    assert card["data"]["sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()
    assert (card["data"]["rows"], card["data"]["rows_evaluated"]) == (pq.read_metadata(data).num_rows, 3)
    assert card["factors"] == {"constructions": ["native", "context"], "thinking": ["keep"], "system_prompts": ["dataset_template"]}
    assert card["seeds"] == {"used": [3, 5], "requested": [3, 5], "note": None}
    assert card["decoding"] == {"temperature": 0.8, "top_p": 1.0, "max_tokens": 12, "n": 1}
    # Evaluation's own caps: train.rl.max_response_length=9 changed nothing here.
    assert card["rollout_caps"] == {"max_prompt_length": 512, "max_response_length": 40, "max_assistant_turns": 2,
                                    "max_tool_rounds": 1, "max_parallel_calls": 4}
    assert card["software"]["slca_version"] and len(card["software"]["git_commit"] or "x" * 40) == 40
    assert card["compute"]["cpu_model"] and card["compute"]["torch_threads"] >= 1
    assert card["scoring"] == {"benchmark": "toucan", "reward": "hierr", "success_threshold": 0.9, "simulator": "schema"}
    cells = result["cells"]
    assert [c["protocol"]["construction"] for c in cells] == ["native", "context"]
    assert all(len(c["per_seed"]) == 2 and c["seeds"] == [3, 5] and c["metrics"]["rows"]["mean"] == 3 for c in cells)
    # The sensitivity row is the paired difference, recomputable from the per-seed values.
    (effect,) = result["sensitivity"]["effects"]
    diffs = [b["process"] - a["process"] for a, b in zip(cells[0]["per_seed"], cells[1]["per_seed"])]
    assert (effect["factor"], effect["level"], effect["reference"]) == ("construction", "context", "native")
    assert effect["diffs"]["process"]["mean"] == pytest.approx(sum(diffs) / 2) and effect["diffs"]["process"]["n"] == 2
    table = (run_dir / "eval" / "table.md").read_text()
    assert "mean ± std over 2 seeds [3, 5]" in table and "## Sensitivity: model" in table and "construction: context − native" in table
    assert not [p for p in (run_dir / "eval").iterdir() if p.name.startswith(".")]  # no temporaries left


def test_the_pipeline_stage_and_slca_eval_share_one_run_layout(evaluated: tuple[Path, str]) -> None:
    run_dir, _ = evaluated
    spec = (run_dir / "spec.yaml").read_text()
    assert "stages:\n  - data\n  - eval" in spec or "stages: [data, eval]" in spec
    result = json.loads((run_dir / "eval" / "result.json").read_text())
    assert result["results"] == "eval/results.json" and result["table"] == "eval/table.md"
    assert json.loads((run_dir / "provenance.json").read_text())["compute"]["torch_threads"] >= 1


def test_seeds_at_temperature_zero_collapse_to_the_first_with_a_note() -> None:
    greedy = compose_spec(["eval.seeds=[4,1,2]"]).eval
    seeds, note = effective_seeds(greedy)
    assert seeds == (4,) and note is not None and "[4, 1, 2]" in note and len(note.splitlines()) == 1
    sampled = compose_spec(["eval.seeds=[4,1,2]", "eval.temperature=0.5"]).eval
    assert effective_seeds(sampled) == ((4, 1, 2), None)


def test_one_seed_prints_as_one_run_and_several_as_mean_and_std() -> None:
    assert fmt(MeanStd(0.5, 0.0, 1)) == "0.500"
    assert fmt(MeanStd(0.5, 0.125, 3)) == "0.500 ± 0.125"
    assert fmt(MeanStd(float("nan"), float("nan"), 0)) == "n/a"
    assert fmt_diff(MeanStd(-0.25, 0.0, 1)) == "-0.250" and fmt_diff(MeanStd(0.1, 0.02, 4)) == "+0.100 ± 0.020"


def _cell(construction: str, prompt: str, values: list[float]) -> CellResult:
    return cell_result(ProtocolCell(construction, "keep", prompt), list(range(len(values))), [{"success": v} for v in values])


def test_the_sensitivity_table_pairs_levels_over_seeds_and_the_other_factors() -> None:
    # success = 0.2 + 0.1 [context] + {0, 0.3, 0.1}[prompt] + seed offset {0, 0.05}: every paired
    # difference is exact, so each effect has std 0 and the seed row is the std of (0, 0.05).
    prompt_gain = {"dataset": 0.0, "stronger": 0.3, "bfcl_default": 0.1}
    cells = [_cell(c, p, [0.2 + (0.1 if c == "context" else 0.0) + g + s for s in (0.0, 0.05)])
             for c in ("native", "context") for p, g in prompt_gain.items()]
    effects = {(e.factor, e.level): e for e in factor_effects(cells, ["success"])}
    assert set(effects) == {("construction", "context"), ("system_prompt", "stronger"), ("system_prompt", "bfcl_default")}
    for key, expected, pairs in [(("construction", "context"), 0.1, 6), (("system_prompt", "stronger"), 0.3, 4),
                                 (("system_prompt", "bfcl_default"), 0.1, 4)]:
        diff = effects[key].diffs["success"]
        assert (diff.mean, diff.std, diff.n) == (pytest.approx(expected), pytest.approx(0.0, abs=1e-12), pairs)
    assert effects[("system_prompt", "stronger")].reference == "dataset"
    spread = seed_spread(cells, ["success"])["success"]
    assert spread.mean == pytest.approx(0.05 / 2**0.5) and spread.n == 6
    assert seed_spread([_cell("native", "dataset", [0.4])], ["success"]) is None


@pytest.mark.parametrize("args, mentions", [
    (["--from", "no/such/run"], ["no/such/run", "no such directory, and no run under runs/"]),
    (["--model", "no/such/model"], ["no/such/model", "not a directory"]),
    (["--from", "a", "--model", "b"], ["--from", "--model"]),
    (["eval.n=2"], ["eval.n", "temperature"]),
    (["eval.benchmark=nope"], ["eval.benchmark", "toucan"]),
    (["eval.system_prompts=[stronger,stronger]"], ["eval.system_prompts", "twice"]),
    (["eval.max_samples=3"], ["eval.max_samples"]),
])
def test_bad_evaluation_requests_are_refused_in_one_line_and_write_nothing(args, mentions, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    before = snapshot([tmp_path])
    assert_refused(run_cli(["eval", *args], capsys), *mentions)
    assert snapshot([tmp_path]) == before
