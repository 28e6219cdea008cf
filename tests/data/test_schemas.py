"""Schema checks: the reference samples pass; each kind of corruption is reported with index and field."""

from __future__ import annotations

import copy
import json

import pytest
from .helpers import RL_PREVIEW, SFT_PREVIEW, conversations_from_reference, load_jsonl

from slca.data.schemas import DataValidationError, Validator, gold_steps, validate_row


@pytest.fixture(scope="module")
def rl_rows():
    return load_jsonl(RL_PREVIEW)


@pytest.fixture(scope="module")
def sft_rows():
    return [conversations_from_reference(r) for r in load_jsonl(SFT_PREVIEW)]


def test_reference_samples_validate(rl_rows, sft_rows):
    assert len(rl_rows) == 5 and len(sft_rows) == 5
    for i, r in enumerate(rl_rows):
        assert validate_row(r, "rl", i) == []
        assert validate_row(r, "eval", i) == []
    for i, r in enumerate(load_jsonl(SFT_PREVIEW)):  # the materialised messages/tools layout
        assert validate_row(r, "sft", i) == []
    for i, r in enumerate(sft_rows):  # the same rows as ShareGPT + hermes
        assert validate_row(r, "sft", i) == []


def test_synthetic_splits_validate(synth_set):
    from slca.data.io import read_rows

    for split, path in (("sft", synth_set.sft), ("sft", synth_set.sft_full), ("rl", synth_set.rl), ("eval", synth_set.eval)):
        rows = list(read_rows(path))
        assert rows
        assert [e for i, r in enumerate(rows) for e in validate_row(r, split, i)] == []


def _sft_corruptions(base):
    def edit(fn):
        r = copy.deepcopy(base)
        fn(r)
        return r

    gpt_call = next(i for i, t in enumerate(base["conversations"]) if t["from"] == "gpt" and "<tool_call>" in t["value"])

    def set_turn(i, v):
        return lambda r: r["conversations"][i].__setitem__("value", v)

    return {
        "missing column": (edit(lambda r: r.pop("conversations")), "conversations", "missing column"),
        "wrong type": (edit(lambda r: r.__setitem__("conversations", "hello")), "conversations", "wrong type"),
        "empty conversation": (edit(lambda r: r.__setitem__("conversations", [])), "conversations", "empty"),
        "unbalanced tags": (edit(set_turn(gpt_call, '<tool_call>\n{"name": "x"}\n')), f"conversations[{gpt_call}].value", "unbalanced"),
        "bad JSON in call": (edit(set_turn(gpt_call, '<tool_call>\n{"name": "a", "arguments": {\n</tool_call>')),
                             f"conversations[{gpt_call}].value", "neither JSON nor a Python literal"),
        "unknown tool in call": (edit(set_turn(gpt_call, '<tool_call>\n{"name": "no_such_tool", "arguments": {}}\n</tool_call>')),
                                 f"conversations[{gpt_call}].value", "unknown tool"),
        "unknown role": (edit(lambda r: r["conversations"][1].__setitem__("from", "robot")), "conversations[1].from", "unknown role"),
        "no tools block": (edit(set_turn(0, "You are helpful.")), "conversations[0].value", "no <tools>"),
        "arguments not an object": (edit(set_turn(gpt_call, '<tool_call>\n{"name": "x", "arguments": [1]}\n</tool_call>')),
                                    f"conversations[{gpt_call}].value", "must be an object"),
        "last turn not gpt": (edit(lambda r: r["conversations"].append({"from": "human", "value": "thanks"})),
                              f"conversations[{len(base['conversations'])}].from", "last turn"),
        "wrong type extra column": (edit(lambda r: r.__setitem__("uuid", 7)), "uuid", "wrong type"),
    }


def _rl_corruptions(base):
    def edit(fn):
        r = copy.deepcopy(base)
        fn(r)
        return r

    gt = "reward_model.ground_truth"
    return {
        "unknown tool in gold": (edit(lambda r: r["reward_model"]["ground_truth"].__setitem__(
            "gold_tool_calls", json.dumps([[{"name": "ghost", "arguments": {}}]]))), f"{gt}.gold_tool_calls[0][0]", "unknown tool"),
        "missing prompt": (edit(lambda r: r.pop("prompt")), "prompt", "missing column"),
        "empty prompt": (edit(lambda r: r.__setitem__("prompt", [])), "prompt", "empty"),
        "tools not JSON": (edit(lambda r: r.__setitem__("tools", "[{oops")), "tools", "bad JSON"),
        "gold not JSON": (edit(lambda r: r["reward_model"]["ground_truth"].__setitem__("gold_tool_calls", "[[{")),
                          f"{gt}.gold_tool_calls", "bad gold"),
        "subset disagrees with gold": (edit(lambda r: r["reward_model"]["ground_truth"].__setitem__("subset_name", "irrelevant")),
                                       f"{gt}.subset_name", "disagrees"),
        "missing allowed_tools": (edit(lambda r: r["reward_model"]["ground_truth"].pop("allowed_tools")), f"{gt}.allowed_tools", "missing"),
        "extra_info wrong type": (edit(lambda r: r.__setitem__("extra_info", "x")), "extra_info", "wrong type"),
        "prompt ends with assistant": (edit(lambda r: r["prompt"].append({"role": "assistant", "content": "hi"})),
                                       f"prompt[{len(base['prompt'])}].role", "last prompt message"),
        "unbalanced tags in prompt": (edit(lambda r: r["prompt"].__setitem__(1, {"role": "user", "content": "<tool_response> x"})),
                                      "prompt[1].content", "unbalanced"),
    }


def test_each_sft_corruption_reported_with_index_and_field(synth_set):
    from slca.data.io import read_rows

    base = next(r for r in read_rows(synth_set.sft) if any("<tool_call>" in t["value"] for t in r["conversations"]))
    cases = _sft_corruptions(base)
    assert len(cases) >= 10
    for k, (name, (row, field, reason)) in enumerate(cases.items()):
        errs = validate_row(row, "sft", index=100 + k)
        assert errs, name
        assert all(e.index == 100 + k for e in errs), name
        assert any(e.field == field and reason in e.reason for e in errs), (name, errs)


def test_each_rl_corruption_reported_with_index_and_field(synth_set):
    from slca.data.io import read_rows

    base = next(r for r in read_rows(synth_set.rl) if r["reward_model"]["ground_truth"]["subset_name"] == "tool_call")
    assert validate_row(base, "rl") == []
    for k, (name, (row, field, reason)) in enumerate(_rl_corruptions(base).items()):
        errs = validate_row(row, "rl", index=k)
        assert any(e.field == field and reason in e.reason and e.index == k for e in errs), (name, errs)


def test_non_dict_row():
    (e,) = validate_row(["not", "a", "row"], "rl", 4)
    assert (e.index, e.field) == (4, "<row>")


def test_validator_counts_reconcile_and_modes(synth_set):
    from slca.data.io import read_rows

    rows = list(read_rows(synth_set.rl))
    bad = copy.deepcopy(rows[3])
    bad.pop("tools")
    stream = rows[:3] + [bad] + rows[3:10] + ["junk"]
    seen = []
    v = Validator("rl", "skip", on_reject=lambda i, errs, row: seen.append((i, [e.field for e in errs])))
    out = list(v(stream))
    assert len(out) == 10
    assert v.report.n_in == 12 and v.report.n_out == 10 and v.report.n_rejected == 2 and v.report.reconciled
    assert seen == [(3, ["tools"]), (11, ["<row>"])]
    with pytest.raises(DataValidationError) as ei:
        list(Validator("rl", "fail")(stream))
    assert ei.value.errors[0].index == 3 and ei.value.errors[0].field == "tools"


def test_gold_steps_normalisation():
    assert gold_steps(["a", "b"]) == ([[{"name": "a"}, {"name": "b"}]], "flat")
    nested = [[{"name": "a", "arguments": {"x": 1}}], [], [{"name": "b", "arguments": {}}]]
    assert gold_steps(json.dumps(nested)) == ([nested[0], nested[2]], "nested")
    assert gold_steps("[]") == gold_steps([]) == gold_steps(None) == ([], "empty")
    with pytest.raises(ValueError):
        gold_steps([[{"name": "a"}], "b"])
