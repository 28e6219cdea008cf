"""RL derivation: decomposition, determinism, order independence, no eval leakage, funnel counts."""

from __future__ import annotations

import copy
import json
import random

import pytest

from slca.data.dialogue import parse_conversations, user_key
from slca.data.io import read_rows, write_rows
from slca.data.prepare import PrepareOptions, decompose, prepare
from slca.data.schemas import DataValidationError, gold_steps, validate_row

TOOLS = '<tools>\n{"type": "function", "function": {"name": "f", "parameters": {}}}\n{"name": "g"}\n</tools>'
TRAJ = {"conversations": [
    {"from": "system", "value": TOOLS},
    {"from": "human", "value": "first question"},
    {"from": "gpt", "value": '<tool_call>\n[{"name": "f", "arguments": {"x": 1}}, {"name": "g", "arguments": {"y": "a"}}]\n</tool_call>'},
    {"from": "human", "value": "<tool_response>\nF1\n</tool_response>\n<tool_response>\nG1\n</tool_response>"},
    {"from": "gpt", "value": '<tool_call>\n{"name": "f", "arguments": {"x": 2}}\n</tool_call>'},
    {"from": "human", "value": "<tool_response>\nF2\n</tool_response>"},
    {"from": "gpt", "value": "answer one"},
    {"from": "human", "value": "thanks, and a joke?"},
    {"from": "gpt", "value": "no tools needed"},
]}


def test_decompose_one_row_per_user_turn():
    d, errs = parse_conversations(TRAJ["conversations"])
    assert not errs
    rows = decompose(TRAJ, d, source_key="k", split="rl")
    assert len(rows) == 2
    r0, r1 = rows
    gt0 = r0["reward_model"]["ground_truth"]
    assert gold_steps(gt0["gold_tool_calls"]) == ([
        [{"name": "f", "arguments": {"x": 1}}, {"name": "g", "arguments": {"y": "a"}}],
        [{"name": "f", "arguments": {"x": 2}}],
    ], "nested")
    assert gt0["subset_name"] == "tool_call" and gt0["question_content"] == "first question"
    assert gt0["allowed_tools"] == ["f", "g"]
    assert [m["role"] for m in r0["prompt"]] == ["system", "user"]
    assert json.loads(r0["extra_info"]["gold_responses"]) == [
        {"name": "f", "arguments": {"x": 1}, "response": "F1"},
        {"name": "g", "arguments": {"y": "a"}, "response": "G1"},
        {"name": "f", "arguments": {"x": 2}, "response": "F2"},
    ]
    gt1 = r1["reward_model"]["ground_truth"]
    assert gt1["subset_name"] == "irrelevant" and json.loads(gt1["gold_tool_calls"]) == []
    assert r1["extra_info"]["original_turn_index"] == 1
    assert [m["role"] for m in r1["prompt"]] == ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert r1["prompt"][-1]["content"] == "thanks, and a joke?"
    assert json.loads(r1["extra_info"]["original_row"]) == TRAJ
    for r in rows:
        assert validate_row(r, "rl") == []
    opts = PrepareOptions(include_irrelevant=False, system_style="none", keep_original=False)
    (only,) = decompose(TRAJ, d, source_key="k", split="rl", opts=opts)
    assert only["prompt"][0]["role"] == "user" and only["extra_info"]["original_row"] == ""


@pytest.fixture(scope="module")
def raw(synth_set, tmp_path_factory):
    """Trajectories with a few corrupt rows and one duplicate mixed in."""
    rows = list(read_rows(synth_set.sft_full))
    bad = copy.deepcopy(rows[0])
    bad["conversations"] = []
    rows = rows[:10] + [bad, copy.deepcopy(rows[3])] + rows[10:]
    d = tmp_path_factory.mktemp("raw")
    write_rows(d / "raw.parquet", iter(rows))
    rnd = random.Random(0)
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    write_rows(d / "shuffled.jsonl", iter(shuffled))
    return d, len(rows)


def _keys(path):
    return {r["extra_info"]["source_key"] for r in read_rows(path)}


def _sft_keys(path):
    out = set()
    for r in read_rows(path):
        d, _ = parse_conversations(r["conversations"])
        out.add(user_key([t.text for t in d.turns if t.role == "user"]))
    return out


def test_prepare_funnel_determinism_and_no_leak(raw, tmp_path):
    d, n = raw
    opts = PrepareOptions(seed=7, eval_size=25, rl_fraction=0.4)
    f1 = prepare(d / "raw.parquet", tmp_path / "a", opts=opts, on_error="skip")
    prepare(d / "raw.parquet", tmp_path / "b", opts=opts, on_error="skip")
    prepare(d / "shuffled.jsonl", tmp_path / "c", opts=opts, on_error="skip")
    keys = [user_key([t["value"] for t in r["conversations"][1:] if t["from"] == "human" and "<tool_response>" not in t["value"]])
            for r in read_rows(d / "raw.parquet") if r["conversations"]]
    assert f1.raw == n and f1.rejected == 1 and f1.duplicates == len(keys) - len(set(keys)) >= 1
    assert f1.valid == f1.raw - f1.rejected and f1.unique == f1.valid - f1.duplicates
    assert f1.eval_trajectories == 25 and f1.rl_trajectories == round(0.4 * f1.train_trajectories)
    assert f1.sft_full_rows == f1.train_trajectories
    assert json.loads((tmp_path / "a" / "funnel.json").read_text()) == f1.as_dict()
    assert [r["index"] for r in read_rows(tmp_path / "a" / "rejects.jsonl")] == [10]
    for name in ("eval", "sft", "sft_full", "rl"):
        assert (tmp_path / "a" / f"{name}.parquet").read_bytes() == (tmp_path / "b" / f"{name}.parquet").read_bytes()
    # the split of each trajectory does not depend on input order
    assert _keys(tmp_path / "a" / "eval.parquet") == _keys(tmp_path / "c" / "eval.parquet")
    assert _keys(tmp_path / "a" / "rl.parquet") == _keys(tmp_path / "c" / "rl.parquet")
    # no eval trajectory (by content hash of its user turns) reaches any training split
    ev = _keys(tmp_path / "a" / "eval.parquet")
    assert len(ev) == 25
    assert ev.isdisjoint(_keys(tmp_path / "a" / "rl.parquet"))
    assert ev.isdisjoint(_sft_keys(tmp_path / "a" / "sft_full.parquet"))
    # ... nor does any single eval question, even inside a longer training conversation
    eval_q = {r["reward_model"]["ground_truth"]["question_content"] for r in read_rows(tmp_path / "a" / "eval.parquet")}
    train_q = {t["value"] for r in read_rows(tmp_path / "a" / "sft_full.parquet") for t in r["conversations"] if t["from"] == "human"}
    assert eval_q and train_q and eval_q.isdisjoint(train_q)
    assert f1.rl_rows == sum(1 for _ in read_rows(tmp_path / "a" / "rl.parquet"))
    assert f1.unique == f1.eval_trajectories + f1.eval_overlap + f1.train_trajectories
    # a different seed gives a different eval cut
    f4 = prepare(d / "raw.parquet", tmp_path / "d", opts=PrepareOptions(seed=8, eval_size=25, rl_fraction=0.4), on_error="skip")
    assert f4.eval_trajectories == 25 and _keys(tmp_path / "d" / "eval.parquet") != ev


def test_prepare_fail_mode_writes_nothing(raw, tmp_path):
    d, _ = raw
    with pytest.raises(DataValidationError) as ei:
        prepare(d / "raw.parquet", tmp_path / "x", opts=PrepareOptions(eval_size=5))
    assert ei.value.errors[0].index == 10 and ei.value.errors[0].field == "conversations"
    assert not list((tmp_path / "x").glob("*.parquet"))
