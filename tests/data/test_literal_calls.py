"""A `<tool_call>` body is JSON or a Python literal (real Toucan rows hold both,
docs/method.md#sft-materialisation): the converter, the validator, prepare and stats accept
literal bodies, read them with ast.literal_eval only, and produce exactly what the JSON spelling
of the same calls produces."""

from __future__ import annotations

import json

import pytest

from slca.data import hermes
from slca.data.convert import convert_file
from slca.data.io import read_rows, write_rows
from slca.data.prepare import PrepareOptions, prepare
from slca.data.schemas import validate_row
from slca.data.stats import collect


def _as_literal(value: str) -> str:
    """The same calls written the way Python prints them (single quotes, True/None)."""
    head, rest = value.split(hermes.CALL_OPEN, 1)
    body, tail = rest.split(hermes.CALL_CLOSE, 1)
    return f"{head}{hermes.CALL_OPEN}\n{json.loads(body)!r}\n{hermes.CALL_CLOSE}{tail}"


@pytest.fixture(scope="module")
def pair(synth_set, tmp_path_factory):
    """(json file, the same file with ~1% of its call blocks as Python literals, blocks changed)."""
    d = tmp_path_factory.mktemp("literal")
    rows = list(read_rows(synth_set.sft_full))
    write_rows(d / "json.jsonl", iter(rows))
    blocks = [(i, k) for i, r in enumerate(rows) for k, t in enumerate(r["conversations"])
              if t["from"] == "gpt" and hermes.CALL_OPEN in t["value"]]
    chosen = blocks[:: 100]  # about 1% of the call blocks, spread over the file
    lit = json.loads(json.dumps(rows))
    for i, k in chosen:
        lit[i]["conversations"][k]["value"] = _as_literal(lit[i]["conversations"][k]["value"])
        assert "'" in lit[i]["conversations"][k]["value"]  # really not JSON any more
    write_rows(d / "literal.jsonl", iter(lit))
    return d, len(rows), chosen


def test_a_realistic_file_with_one_percent_literal_calls_loses_no_rows(pair):
    d, n, chosen = pair
    assert len(chosen) >= 2
    for layout in ("llamafactory", "reference"):
        a = convert_file(d / "json.jsonl", d / layout / "a.jsonl", layout=layout)
        b = convert_file(d / "literal.jsonl", d / layout / "b.jsonl", layout=layout)
        assert a.rows_out == b.rows_out == n and b.rows_rejected == 0
        out_a = [r for r in read_rows(d / layout / "a.jsonl")]
        out_b = [r for r in read_rows(d / layout / "b.jsonl")]
        if layout == "llamafactory":
            assert out_a == out_b  # the calls are the same calls, however they were spelled
        else:  # the reference layout keeps the input columns; only the parsed messages must agree
            assert [r["messages"] for r in out_a] == [r["messages"] for r in out_b]


def test_validate_prepare_and_stats_accept_literal_bodies_alike(pair, tmp_path):
    d, n, chosen = pair
    rows = list(read_rows(d / "literal.jsonl"))
    assert [e for i, r in enumerate(rows) for e in validate_row(r, "sft", i)] == []
    assert collect(iter(rows), "sft").unparsed == 0
    opts = PrepareOptions(eval_size=10)
    fa = prepare(d / "json.jsonl", tmp_path / "a", opts=opts)
    fb = prepare(d / "literal.jsonl", tmp_path / "b", opts=opts)
    assert fa.as_dict() == fb.as_dict() and fb.rejected == 0
    for split in ("eval", "rl"):
        gold = [[r["reward_model"]["ground_truth"]["gold_tool_calls"] for r in read_rows(tmp_path / x / f"{split}.parquet")]
                for x in ("a", "b")]
        assert gold[0] == gold[1]


@pytest.mark.parametrize("body, reason", [
    ("__import__('os').system('touch PWNED')", "neither JSON nor a Python literal"),
    ("(lambda: 1)()", "neither JSON nor a Python literal"),
    ("{'name': 'f', 'arguments': {1: 2, None: 3}}", "not a string"),
    ("{'name': 'f', 'arguments': {'a': {1, 2}}}", "set value is not JSON"),
    ("{'name': 'f', 'arguments': {'a': b'x'}}", "bytes value is not JSON"),
    ("{'name': 'f', 'arguments': {'a': 1j}}", "complex value is not JSON"),
    ("{'name': 'f', 'arguments': {[1]: 2}}", "neither JSON nor a Python literal"),
    ("{'name': 'f', 'arguments': " + "[" * 3000 + "]" * 3000 + "}", "neither JSON nor a Python literal"),
])
def test_hostile_literal_bodies_are_rejected_rows_never_run(body, reason, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    conv = [{"from": "system", "value": '<tools>\n{"name": "f"}\n</tools>'},
            {"from": "human", "value": "hi"},
            {"from": "gpt", "value": f"<tool_call>\n{body}\n</tool_call>"}]
    (err,) = validate_row({"conversations": conv}, "sft", 7)
    assert err.index == 7 and err.field == "conversations[2].value" and reason in err.reason
    assert not (tmp_path / "PWNED").exists()
