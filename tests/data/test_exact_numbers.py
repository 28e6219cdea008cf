"""Numbers end to end (docs/method.md#numbers-empty-files-and-limits): an integer of any size keeps
its exact value through validate, convert, prepare, stats and the exact-match reward; NaN, Infinity
and numbers beyond a float's range are an invalid row naming the field, in every command alike.
(`slca data curate` is covered in test_curate.py and test_curate_bad_inputs.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slca.config.groups.reward import ExactMatchReward
from slca.data import fastjson
from slca.data.convert import convert_file
from slca.data.io import read_rows, write_rows
from slca.data.prepare import PrepareOptions, prepare
from slca.data.stats import collect
from slca.data.validate import validate_split_file
from slca.rewards import compute_score

BIG = 10**30  # orjson would read it as 1e+30
BIGGER = 12345678901234567890123  # ... and this one as 1.2345678901234568e+22
NON_FINITE = ("NaN", "Infinity", "-Infinity", "1e999")
TOOLS = [{"name": "pay", "parameters": {"type": "object", "properties": {"amount": {"type": "integer"}}}}]


def sft_line(i: int, amount: str) -> str:
    """One ShareGPT + hermes row as a JSON line; `amount` is put into the tool call's JSON text as is."""
    call = '<tool_call>\n{"name": "pay", "arguments": {"amount": %s}}\n</tool_call>' % amount
    row = {"uuid": f"u{i}", "conversations": [
        {"from": "system", "value": "<tools>\n" + json.dumps(TOOLS) + "\n</tools>"},
        {"from": "human", "value": f"Please pay {amount} (order {i})."},
        {"from": "gpt", "value": call},
        {"from": "human", "value": "<tool_response>\npaid\n</tool_response>"},
        {"from": "gpt", "value": "Done."}]}
    return json.dumps(row)


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def big_sft(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("big")
    return write_lines(d / "sft.jsonl", [sft_line(0, str(BIG)), sft_line(1, str(BIGGER)), sft_line(2, "5"),
                                         sft_line(3, str(-BIG))])


@pytest.fixture(scope="module")
def prepared_rl(big_sft) -> list[dict]:
    out = big_sft.parent / "prep"
    prepare(big_sft, out, opts=PrepareOptions(eval_size=0, rl_fraction=1.0))
    return list(read_rows(out / "rl.parquet"))


def _amounts(rows: list[dict], column: str) -> list:
    if column == "gold_tool_calls":
        return sorted(json.loads(r["reward_model"]["ground_truth"]["gold_tool_calls"])[0][0]["arguments"]["amount"]
                      for r in rows)
    return sorted(json.loads(r["extra_info"]["gold_responses"])[0]["arguments"]["amount"] for r in rows)


# --- the decoder --------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-(10**60), max_value=10**60) | st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64,
                                                                               -(2**63), -(2**63) - 1]))
def test_an_integer_of_any_size_decodes_and_encodes_exactly(n):
    for text in (f'{{"a": [{n}]}}', f'{{"a": [{n}]}}'.encode()):
        value = fastjson.loads(text)["a"][0]
        assert type(value) is int and value == n
    assert fastjson.loads(fastjson.dumps_compact({"a": n})) == {"a": n}
    assert json.loads(fastjson.dumps_line({"a": n})) == {"a": n}


def test_digit_runs_inside_strings_or_fractions_decode_unchanged():
    text = '{"id": "12345678901234567890123", "x": 0.12345678901234567890123, "y": 1.5e300}'
    assert fastjson.loads(text) == json.loads(text)


@pytest.mark.parametrize("literal, name", [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity"),
                                           ("1e999", "Infinity"),
                                           pytest.param("-1" + "0" * 400 + ".0", "-Infinity", id="400-digit float")])
def test_nan_infinity_and_overflow_are_refused_naming_where_they_sit(literal, name):
    with pytest.raises(fastjson.NonFiniteNumber) as ei:
        fastjson.loads(f'{{"calls": [{{"arguments": {{"amount": {literal}}}}}]}}')
    assert ei.value.path == "calls[0].arguments.amount"
    assert ei.value.reason == f"{name} is not a finite number (JSON has no NaN or Infinity)"
    assert isinstance(ei.value, json.JSONDecodeError)  # every caller's "bad JSON" handling still applies


# --- integers beyond 64 bits, command by command ------------------------------------------------

def test_prepare_stores_gold_calls_and_recorded_responses_exactly(prepared_rl):
    assert _amounts(prepared_rl, "gold_tool_calls") == sorted([BIG, BIGGER, 5, -BIG])
    assert _amounts(prepared_rl, "gold_responses") == sorted([BIG, BIGGER, 5, -BIG])


def test_exact_match_scores_the_exact_integer_1_and_its_float_0(prepared_rl):
    row = next(r for r in prepared_rl if str(BIGGER) in r["reward_model"]["ground_truth"]["gold_tool_calls"])
    gt = row["reward_model"]["ground_truth"]

    def score(amount: str) -> float:
        text = '<tool_call>\n{"name": "pay", "arguments": {"amount": %s}}\n</tool_call>' % amount
        return compute_score("d", text, gt, row["extra_info"], reward_config=ExactMatchReward())["score"]

    assert score(str(BIGGER)) == 1.0
    assert score("1.2345678901234568e+22") == 0.0 and score(str(BIGGER + 1)) == 0.0


@pytest.mark.parametrize("layout", ["llamafactory", "reference"])
def test_convert_writes_the_integer_digit_for_digit(big_sft, tmp_path, layout):
    rep = convert_file(big_sft, tmp_path / "lf" / "o.jsonl", layout=layout)
    assert (rep.rows_in, rep.rows_out) == (4, 4)
    text = (tmp_path / "lf" / "o.jsonl").read_text()
    assert str(BIG) in text and str(BIGGER) in text and "e+30" not in text and "e+22" not in text


def test_validate_keeps_integers_exactly_and_names_a_counter_beyond_int64(prepared_rl, tmp_path):
    rows = [json.loads(json.dumps(r)) for r in prepared_rl]
    rows[0]["extra_info"]["original_turn_index"] = 2**63 - 1  # the largest the int64 column holds
    rows[1]["extra_info"]["original_turn_index"] = BIG
    src = tmp_path / "rl.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rep = validate_split_file(src, "rl", "skip", tmp_path / "rej", out=tmp_path / "valid.jsonl")
    assert (rep.n_in, rep.n_out, rep.n_rejected) == (4, 3, 1)
    (rej,) = read_rows(tmp_path / "rej" / "rl.rejects.jsonl")
    reason = f"out of range: {BIG} (expected 0 to 2**63-1, the int64 column it is stored in)"  # not "got float"
    assert rej["index"] == 1 and rej["errors"] == [{"field": "extra_info.original_turn_index", "reason": reason}]
    kept = list(read_rows(tmp_path / "valid.jsonl"))
    assert kept[0]["extra_info"]["original_turn_index"] == 2**63 - 1
    assert _amounts(kept, "gold_tool_calls") == _amounts([rows[k] for k in (0, 2, 3)], "gold_tool_calls")


def test_validate_accepts_sft_rows_whose_calls_hold_big_integers(big_sft, tmp_path):
    rep = validate_split_file(big_sft, "sft", out=tmp_path / "v.jsonl")
    assert (rep.n_in, rep.n_out) == (4, 4)
    assert [r["conversations"][2]["value"] for r in read_rows(tmp_path / "v.jsonl")] == \
        [r["conversations"][2]["value"] for r in read_rows(big_sft)]


def test_stats_counts_rows_holding_big_integers(big_sft, prepared_rl):
    assert (collect(read_rows(big_sft), "sft").unparsed, collect(prepared_rl, "rl").unparsed) == (0, 0)


def test_a_parquet_output_names_the_row_and_field_of_an_integer_it_cannot_hold(big_sft, tmp_path):
    from slca.data.errors import DataInputError

    rows = list(read_rows(big_sft))
    rows[2]["order_number"], rows[0]["order_number"] = BIG, 7
    write_rows(tmp_path / "in.jsonl", iter(rows))
    assert validate_split_file(tmp_path / "in.jsonl", "sft", out=tmp_path / "out.jsonl").n_out == 4  # JSON keeps it
    with pytest.raises(DataInputError, match="row 2, field order_number"):
        validate_split_file(tmp_path / "in.jsonl", "sft", out=tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()


# --- NaN / Infinity, command by command ---------------------------------------------------------

@pytest.fixture(scope="module")
def nan_sft(tmp_path_factory) -> Path:
    """Rows 1, 3, 5, 7 hold NaN, Infinity, -Infinity and 1e999 in a tool call; the rest are good."""
    lines = []
    for i in range(8):
        lines.append(sft_line(i, NON_FINITE[i // 2] if i % 2 else str(i)))
    return write_lines(tmp_path_factory.mktemp("nan") / "sft.jsonl", lines)


BAD_ROWS = [1, 3, 5, 7]


def _named(rejects: Path) -> dict[int, tuple[str, str]]:
    out = {}
    for r in read_rows(rejects):  # the rejects file stays strict JSON, so it reads back as rows
        out[r["index"]] = (r["errors"][0]["field"], r["errors"][0]["reason"])
    return out


def _assert_tool_call_rows_named(named: dict[int, tuple[str, str]]) -> None:
    assert sorted(named) == BAD_ROWS
    for i in BAD_ROWS:
        field, reason = named[i]
        name = {"NaN": "NaN", "Infinity": "Infinity", "-Infinity": "-Infinity", "1e999": "Infinity"}[NON_FINITE[i // 2]]
        assert field == "conversations[2].value"
        assert reason == f"<tool_call> body at arguments.amount: {name} is not a finite number (JSON has no NaN or Infinity)"


def test_validate_names_each_non_finite_number(nan_sft, tmp_path):
    rep = validate_split_file(nan_sft, "sft", "skip", tmp_path, out=tmp_path / "ok.jsonl")
    assert (rep.n_in, rep.n_out, rep.n_rejected) == (8, 4, 4)
    _assert_tool_call_rows_named(_named(tmp_path / "sft.rejects.jsonl"))
    assert "NaN" not in (tmp_path / "ok.jsonl").read_text() and "null" not in (tmp_path / "ok.jsonl").read_text()


def test_convert_names_each_non_finite_number(nan_sft, tmp_path):
    rep = convert_file(nan_sft, tmp_path / "o.jsonl", on_error="skip")
    assert (rep.rows_in, rep.rows_out, rep.rows_rejected) == (8, 4, 4)
    _assert_tool_call_rows_named(_named(tmp_path / "o.rejects.jsonl"))


def test_prepare_names_each_non_finite_number(nan_sft, tmp_path):
    funnel = prepare(nan_sft, tmp_path / "p", opts=PrepareOptions(eval_size=1), on_error="skip")
    assert (funnel.raw, funnel.rejected) == (8, 4)
    _assert_tool_call_rows_named(_named(tmp_path / "p" / "rejects.jsonl"))


def test_stats_leaves_rows_with_non_finite_numbers_unparsed(nan_sft):
    st_ = collect(read_rows(nan_sft), "sft")
    assert (st_.rows, st_.unparsed) == (8, 4)


@pytest.mark.parametrize("literal", NON_FINITE)
def test_a_non_finite_value_anywhere_in_a_json_lines_row_names_its_field(prepared_rl, tmp_path, literal):
    lines = [json.dumps(r) for r in prepared_rl[:3]]
    lines[1] = lines[1].replace('"index": 1', f'"index": {literal}', 1)
    gold = json.loads(lines[2])
    gold["reward_model"]["ground_truth"]["gold_tool_calls"] = '[[{"name": "pay", "arguments": {"amount": %s}}]]' % literal
    lines[2] = json.dumps(gold)
    rep = validate_split_file(write_lines(tmp_path / "rl.jsonl", lines), "rl", "skip", tmp_path)
    assert (rep.n_out, rep.n_rejected) == (1, 2)
    named = _named(tmp_path / "rl.rejects.jsonl")
    assert named[1][0] == "extra_info.index" and "is not a finite number" in named[1][1]
    assert named[2][0] == "reward_model.ground_truth.gold_tool_calls[0][0].arguments.amount"
    assert collect(read_rows(tmp_path / "rl.jsonl"), "rl").unparsed == 2


def test_a_nan_in_a_parquet_double_column_names_its_field(prepared_rl, tmp_path):
    rows = [json.loads(json.dumps(r)) for r in prepared_rl]
    table = pa.Table.from_pylist(rows)
    scores = pa.array([0.5, float("nan"), 1.0, float("inf")])
    pq.write_table(table.append_column("difficulty", scores), tmp_path / "rl.parquet")
    rep = validate_split_file(tmp_path / "rl.parquet", "rl", "skip", tmp_path)
    assert (rep.n_out, rep.n_rejected) == (2, 2)
    named = _named(tmp_path / "rl.rejects.jsonl")
    assert {i: f for i, (f, _) in named.items()} == {1: "difficulty", 3: "difficulty"}
    assert [r["row"]["difficulty"] for r in read_rows(tmp_path / "rl.rejects.jsonl")] == ["NaN", "Infinity"]


TOOLS_LINE = '{"name": "pay"}'


@pytest.mark.parametrize("system, call, field, reason", [
    ('<tools>\n[{"name": "pay", "parameters": {"properties": {"amount": {"default": NaN}}}}]\n</tools>', TOOLS_LINE,
     "conversations[0].value", "<tools> block at [0].parameters.properties.amount.default: NaN"),
    ('<tools>\n{"name": "pay"}\n{"name": "q", "x": -Infinity}\n</tools>', TOOLS_LINE,
     "conversations[0].value", "tools line 1 at x: -Infinity"),
    ("<tools>\n" + TOOLS_LINE + "\n</tools>", json.dumps({"name": "pay", "arguments": '{"amount": NaN}'}),
     "conversations[2].value", "arguments of 'pay' at amount: NaN"),
    ("<tools>\n" + TOOLS_LINE + "\n</tools>", "{'name': 'pay', 'arguments': {'amount': 1e999}}",  # a Python literal
     "conversations[2].value", "<tool_call> body at arguments.amount: Infinity"),
], ids=["tools block", "tools line", "arguments as JSON text", "Python literal"])
def test_non_finite_numbers_in_tools_and_calls_name_where_they_sit(system, call, field, reason):
    from slca.data.schemas import validate_row

    conv = [{"from": "system", "value": system}, {"from": "human", "value": "pay"},
            {"from": "gpt", "value": f"<tool_call>\n{call}\n</tool_call>"}]
    (err,) = validate_row({"conversations": conv}, "sft", 4)
    assert (err.index, err.field) == (4, field) and err.reason.startswith(reason)
    assert err.reason.endswith("is not a finite number (JSON has no NaN or Infinity)")
