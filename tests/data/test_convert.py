"""LLaMA-Factory converter: golden reference layout, alternation, counts and rejects."""

from __future__ import annotations

import copy
import json

import pytest
from .helpers import SFT_PREVIEW, conversations_from_reference, load_jsonl

from slca.data.convert import ConvertReport, convert_file, convert_rows, rejects_path
from slca.data.io import read_rows, write_rows
from slca.data.schemas import DataValidationError

USER_SIDE, ASSISTANT_SIDE = {"user", "observation"}, {"assistant", "function_call"}


def _alternates(msgs):
    msgs = msgs[1:] if msgs and msgs[0]["role"] == "system" else msgs  # the dataset's system text leads
    return len(msgs) % 2 == 0 and all(m["role"] in (USER_SIDE if i % 2 == 0 else ASSISTANT_SIDE) for i, m in enumerate(msgs))


def test_reference_layout_reproduces_preview_bytes(tmp_path):
    rows = [conversations_from_reference(r) for r in load_jsonl(SFT_PREVIEW)]
    src = tmp_path / "sft.parquet"
    write_rows(src, iter(rows))
    out = tmp_path / "lf" / "toucan_toolcall_sft.jsonl"
    rep = convert_file(src, out, layout="reference")
    assert rep.rows_out == 5
    assert out.read_text(encoding="utf-8") == SFT_PREVIEW.read_text(encoding="utf-8")
    info = json.loads((out.parent / "dataset_info.json").read_text())
    ref_info = json.loads((SFT_PREVIEW.parent / "dataset_info.json").read_text())
    assert info["toucan_toolcall_sft"]["tags"] == ref_info["toucan_toolcall_sft"]["tags"]


def test_reference_layout_would_break_alternation():
    # why the llamafactory layout exists: the reference rows put tool_call after assistant (docs/method.md#reference-quirks Q3)
    msgs = json.loads(load_jsonl(SFT_PREVIEW)[0]["messages"])
    roles = [m["role"] for m in msgs]
    assert roles[1:4] == ["assistant", "tool_call", "tool_call"]


def test_llamafactory_layout_on_samples_keeps_every_call():
    rows = [conversations_from_reference(r) for r in load_jsonl(SFT_PREVIEW)]
    rep = ConvertReport("llamafactory")
    out = list(convert_rows(iter(rows), "llamafactory", report=rep))
    assert len(out) == 5 and rep.rows_in == rep.rows_out == 5
    n_ref_calls = sum(m["role"] == "tool_call" for r in load_jsonl(SFT_PREVIEW) for m in json.loads(r["messages"]))
    n_calls = 0
    for o in out:
        assert _alternates(o["messages"]), [m["role"] for m in o["messages"]]
        for m in o["messages"]:
            if m["role"] == "function_call":
                body = json.loads(m["content"])
                calls = body if isinstance(body, list) else [body]
                assert all(set(c) == {"name", "arguments"} and isinstance(c["arguments"], dict) for c in calls)
                n_calls += len(calls)
    assert n_calls == rep.calls == n_ref_calls
    assert rep.parallel_turns == 1  # the two weather calls of row 0
    assert rep.dropped_texts > 0  # prose before calls, counted not silent


def test_parallel_blocks_and_responses_expand(synth_set):
    row = {"conversations": [
        {"from": "system", "value": '<tools>\n{"name": "f"}\n{"name": "g"}\n</tools>'},
        {"from": "human", "value": "do both"},
        {"from": "gpt", "value": 'ok <tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>\n'
                                 '<tool_call>\n{"name": "g", "arguments": {}}\n</tool_call>'},
        {"from": "human", "value": "<tool_response>\n1\n</tool_response>\n<tool_response>\n2\n</tool_response>"},
        {"from": "gpt", "value": "done: 1 and 2"},
    ]}
    (o,) = convert_rows(iter([row]), "llamafactory")
    assert [m["role"] for m in o["messages"]] == ["user", "function_call", "observation", "assistant"]
    assert json.loads(o["messages"][1]["content"]) == [{"name": "f", "arguments": {"x": 1}}, {"name": "g", "arguments": {}}]
    assert o["messages"][2]["content"] == "1\n</tool_response>\n<tool_response>\n2"
    assert [t["name"] for t in json.loads(o["tools"])] == ["f", "g"]


def test_the_datasets_system_text_reaches_sft_and_rl_alike():
    """LLaMA-Factory's SFT rows, slca's local SFT and the RL prompt (tools rendered by the template) all
    keep the row's system text without its tools block; only the tools block is re-rendered."""
    from slca.models.corpus import sharegpt_to_messages
    from slca.data.dialogue import parse_conversations
    from slca.data.prepare import decompose
    from slca.toolcall.templates import prompt_messages

    text = "Réponds brièvement. 简洁回答。"
    row = {"conversations": [
        {"from": "system", "value": f'{text}\n\n# Tools\n\n<tools>\n{{"name": "f", "parameters": {{}}}}\n</tools>\n\nBe kind.'},
        {"from": "human", "value": "call f"},
        {"from": "gpt", "value": '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'},
        {"from": "human", "value": "<tool_response>\nok\n</tool_response>"},
        {"from": "gpt", "value": "f says ok"},
    ]}
    expected = f"{text}\n\nBe kind."
    (lf,) = convert_rows(iter([row]), "llamafactory")
    assert lf["messages"][0] == {"role": "system", "content": expected} and _alternates(lf["messages"])
    assert sharegpt_to_messages(row)[0][0] == {"role": "system", "content": expected}
    d, errors = parse_conversations(row["conversations"])
    assert not errors
    (rl,) = decompose(row, d, source_key="k", split="rl")
    messages, tools = prompt_messages(rl["prompt"], json.loads(rl["tools"]), system_prompt="dataset_template")
    assert messages[0] == {"role": "system", "content": expected}
    # SFT and RL hand the template the same tool objects: the OpenAI envelope, whichever form the row stored.
    assert tools == sharegpt_to_messages(row)[1] == [{"type": "function", "function": {"name": "f", "parameters": {}}}]


def test_synthetic_sft_converts_alternating(synth_set, tmp_path):
    out = tmp_path / "lf.jsonl"
    rep = convert_file(synth_set.sft, out)
    rows = list(read_rows(out))
    assert rep.rows_in == rep.rows_out == len(rows) == 150 and rep.rows_rejected == 0
    assert all(_alternates(r["messages"]) for r in rows)
    assert rep.dropped_texts == 0


def test_skip_writes_rejects_and_counts_reconcile(synth_set, tmp_path):
    rows = list(read_rows(synth_set.sft))[:20]
    bad = copy.deepcopy(rows[5])
    bad["conversations"][2]["value"] = "<tool_call>\n{not json\n</tool_call>"
    rows.insert(5, bad)
    rows.append({"nothing": 1})
    src = tmp_path / "in.jsonl"
    write_rows(src, iter(rows))
    out = tmp_path / "o" / "sft.jsonl"
    rep = convert_file(src, out, on_error="skip")
    assert (rep.rows_in, rep.rows_out, rep.rows_rejected) == (22, 20, 2)
    rejects = list(read_rows(rejects_path(out)))
    assert [r["index"] for r in rejects] == [5, 21]
    assert rejects[0]["errors"][0]["field"] == "conversations[2].value"
    assert rejects[1]["errors"][0]["field"] == "conversations"
    with pytest.raises(DataValidationError) as ei:
        convert_file(src, tmp_path / "o2" / "sft.jsonl", on_error="fail")
    assert ei.value.errors[0].index == 5
    assert not (tmp_path / "o2" / "sft.jsonl").exists()
