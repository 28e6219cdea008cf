"""`eval.benchmark=lm_eval`: lm-evaluation-harness scores a saved tiny policy on the 10-question task slca ships,
offline; its accuracy against log-likelihoods computed here with transformers, the harness's standard error
against its formula, the protocol card's task versions, `slca eval --compare` (Table 5), a hub task failing
fast instead of waiting on the network, and the refusals at composition."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from slca.config.compose import compose_spec
from slca.config.errors import SpecError
from tests.badinput import assert_refused, run_cli
from tests.evaluation.tiny_policy import save_tiny_policy

TASK_DATA = Path(__file__).resolve().parents[2] / "slca" / "evaluation" / "lmeval" / "tasks" / "slca_tool_mc" / "slca_tool_mc.jsonl"
DOCS = [json.loads(line) for line in TASK_DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
CORPUS = [f"Question: {d['question']}\nAnswer: {c}" for d in DOCS for c in d["choices"]] * 3
BASE = ["experiment=embedded_smoke", "logger=none", "eval.benchmark=lm_eval", "eval.lm_eval.tasks=[{name: slca_tool_mc, metric: acc}]",
        "eval.lm_eval.batch_size=4", "eval.lm_eval.timeout_s=300"]


@pytest.fixture(scope="module")
def tiny_policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_policy(tmp_path_factory.mktemp("policy"), CORPUS)


def slca_eval(argv: list[str], work: Path) -> int:
    from slca.cli import main

    cwd = os.getcwd()
    os.chdir(work)  # runs/ and .cache/ land here
    try:
        return main(argv)
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="module")
def evaluated(tiny_policy: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("lm_eval_run")
    assert slca_eval(["eval", "--model", str(tiny_policy), *BASE, "run.dir=ev"], work) == 0
    return work / "ev"


def oracle_accuracy(model_dir: Path) -> float:
    """Accuracy of the task's own rule computed here: the choice whose continuation (" " + choice after
    "Question: ...\\nAnswer:") has the highest summed log-probability, tokens as the harness's hf model
    splits them (the context's tokens, then the rest of the whole string's, no special tokens)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True).eval()
    right = 0
    for doc in DOCS:
        context = f"Question: {doc['question']}\nAnswer:"
        context_ids = tokenizer(context, add_special_tokens=False)["input_ids"]
        scores = []
        for choice in doc["choices"]:
            whole = tokenizer(context + " " + choice, add_special_tokens=False)["input_ids"]
            with torch.no_grad():
                logprobs = model(torch.tensor([whole])).logits[0].float().log_softmax(-1)
            scores.append(sum(float(logprobs[i - 1, whole[i]]) for i in range(len(context_ids), len(whole))))
        right += int(max(range(len(scores)), key=scores.__getitem__) == doc["answer"])
    return right / len(DOCS)


@pytest.mark.slow
def test_the_harness_scores_the_shipped_task_offline_as_log_likelihoods_computed_here_rank_the_choices(evaluated: Path,
                                                                                                      tiny_policy: Path) -> None:
    (result,) = json.loads((evaluated / "eval" / "results.json").read_text())["results"]
    assert result["headline"] == ["slca_tool_mc/acc", "slca_tool_mc/acc_stderr"]
    (cell,) = result["cells"]
    acc = cell["metrics"]["slca_tool_mc/acc"]["mean"]
    assert acc == pytest.approx(oracle_accuracy(tiny_policy))
    # The harness's standard error of a mean of 0/1 scores: the sample std over sqrt(n).
    n = len(DOCS)
    assert cell["metrics"]["slca_tool_mc/acc_stderr"]["mean"] == pytest.approx(math.sqrt(acc * (1 - acc) / (n - 1)))
    assert cell["metrics"]["rows"]["mean"] == n and cell["metrics"]["skipped_rows"]["mean"] == 0
    card = result["card"]
    assert card["data"]["versions"] == {"slca_tool_mc": "1.0"}
    assert (card["data"]["rows"], card["data"]["rows_evaluated"]) == (10, 10) and len(card["data"]["sha256"]) == 64
    assert card["scoring"]["benchmark"] == "lm_eval" and card["scoring"]["reward"].startswith("lm-evaluation-harness 0.4.13")
    assert card["model"]["path"] == str(tiny_policy.resolve())
    table = (evaluated / "eval" / "table.md").read_text()
    assert "Task versions: slca_tool_mc 1.0" in table and "slca_tool_mc/acc_stderr" in table


@pytest.mark.slow
def test_compare_prints_base_and_rl_side_by_side_with_the_harnesss_standard_errors(evaluated: Path,
                                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    record = json.loads((evaluated / "eval" / "results.json").read_text())["results"][0]["cells"][0]["metrics"]
    acc, se = record["slca_tool_mc/acc"]["mean"], record["slca_tool_mc/acc_stderr"]["mean"]
    result = run_cli(["eval", "--compare", evaluated, f"{evaluated}/eval/results.json@model"], capsys)
    assert result.code == 0, result.err
    assert f"| slca_tool_mc/acc | {acc:.4f} ± {se:.4f} | {acc:.4f} ± {se:.4f} | +0.0000 |" in result.out
    assert "task versions: slca_tool_mc 1.0" in result.out


@pytest.mark.slow
def test_a_task_whose_data_is_on_the_hub_fails_at_once_offline_instead_of_waiting_on_the_network(tiny_policy: Path, tmp_path: Path,
                                                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "hub_probe.yaml").write_text(
        "task: hub_probe\ndataset_path: slca-tests/not-on-this-machine\noutput_type: multiple_choice\ntest_split: test\n"
        "doc_to_text: '{{q}}'\ndoc_to_choice: ['a', 'b']\ndoc_to_target: 0\nmetadata:\n  version: 1.0\n", encoding="utf-8")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = run_cli(["eval", "--model", tiny_policy, *BASE, "eval.lm_eval.tasks=[{name: hub_probe}]",
                          f"eval.lm_eval.include_path={tasks}", "eval.lm_eval.timeout_s=120", "run.dir=ev"], capsys)
    finally:
        os.chdir(cwd)
    assert_refused(result, "lm-evaluation-harness describe run failed", "couldn't reach 'slca-tests/not-on-this-machine' on the hub",
                   "fetch it once with eval.lm_eval.offline=false")
    assert not (tmp_path / "ev" / "eval" / "results.json").exists()


def test_compare_reads_two_records_and_reports_the_difference_and_a_data_mismatch(tmp_path: Path,
                                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    def record(label: str, acc: float, se: float, sha: str) -> dict:
        card = {"model": {"label": label, "path": f"/m/{label}"}, "scoring": {"benchmark": "lm_eval", "reward": "harness"},
                "data": {"sha256": sha, "rows_evaluated": 10, "versions": {"t": "1.0"}}}
        return {"card": card, "headline": ["t/acc", "t/acc_stderr"],
                "cells": [{"metrics": {"t/acc": {"mean": acc, "std": None, "n": 1}, "t/acc_stderr": {"mean": se, "std": None, "n": 1}}}]}

    (tmp_path / "base.json").write_text(json.dumps({"results": [record("backbone", 0.25, 0.05, "a" * 64)]}))
    (tmp_path / "rl.json").write_text(json.dumps({"results": [record("sft", 0.1, 0.01, "b" * 64), record("rl", 0.625, 0.0625, "b" * 64)]}))
    result = run_cli(["eval", "--compare", tmp_path / "base.json", tmp_path / "rl.json"], capsys)
    assert result.code == 0, result.err
    # The last model of a record is taken (rl after sft); 0.625 - 0.25 = +0.375.
    assert "| t/acc | 0.2500 ± 0.0500 | 0.6250 ± 0.0625 | +0.3750 |" in result.out
    assert "- RL: rl = /m/rl" in result.out and "data differ: sha256 aaaaaaaaaaaa (base) vs bbbbbbbbbbbb (RL)" in result.out
    sft = run_cli(["eval", "--compare", tmp_path / "base.json", f"{tmp_path / 'rl.json'}@sft"], capsys)
    assert "| t/acc | 0.2500 ± 0.0500 | 0.1000 ± 0.0100 | -0.1500 |" in sft.out
    assert_refused(run_cli(["eval", "--compare", tmp_path / "base.json", f"{tmp_path / 'rl.json'}@nope"], capsys), "no model labelled 'nope'")
    assert_refused(run_cli(["eval", "--compare", tmp_path / "base.json", tmp_path / "missing"], capsys), "missing: no such directory, and no run under runs/")


@pytest.mark.parametrize(("overrides", "line"), [
    (["eval.constructions=[native,context]"], "eval.constructions: eval.benchmark=lm_eval scores the harness's own prompts; give one level"),
    (["eval.generator=openai"], "eval.generator: eval.benchmark=lm_eval runs the model through the harness's hf or vllm model"),
    (["eval.lm_eval.tasks=[{name: mmlu},{name: mmlu, metric: acc_norm}]"], "eval.lm_eval.tasks: ['mmlu', 'mmlu'] lists a task twice"),
    (["eval.lm_eval.tasks=[{name: 'mmlu; rm -rf'}]"], "eval.lm_eval.tasks.0.name: 'mmlu; rm -rf' is not a task or metric name"),
    (["train.rl.eval_every_steps=2"], "train.rl.eval_every_steps: eval.benchmark=lm_eval scores saved models, not the policy during RL"),
])
def test_a_harness_setting_that_cannot_run_is_refused_at_composition_naming_its_path(overrides: list[str], line: str) -> None:
    with pytest.raises(SpecError) as refused:
        compose_spec(["eval.benchmark=lm_eval", *overrides])
    assert str(refused.value).startswith(f"config error at {line}")


def test_the_default_tasks_are_the_papers_four_with_their_headline_metrics() -> None:
    spec = compose_spec(["eval.benchmark=lm_eval"])
    assert [(t.name, t.metric) for t in spec.eval.lm_eval.tasks] == [
        ("hellaswag", "acc_norm"), ("mmlu", "acc"), ("truthfulqa_mc2", "acc"), ("winogrande", "acc")]
    assert spec.eval.lm_eval.offline
