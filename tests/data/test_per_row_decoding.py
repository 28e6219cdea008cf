"""Decoding is per row: a line or array element that is not UTF-8, holds a lone surrogate, is not
JSON, or nests deeper than the cap is one rejected row (with its index, and its field when it can
be known) in validate, convert, stats and prepare alike; the other rows are kept and the counts
reconcile. Nothing raises RecursionError or fails to encode on the way out."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slca.data.convert import convert_file
from slca.data.io import read_rows, write_rows
from slca.data.prepare import PrepareOptions, prepare
from slca.data.stats import collect
from slca.data.validate import validate_split_file

N_ROWS = 24
DEEP = 10_000


def _line_bad_byte(line: bytes) -> bytes:
    return line.replace(b'"uuid": "', b'"uuid": "\xff', 1)


def _line_lone_surrogate(line: bytes) -> bytes:
    return line.replace(b'"uuid": "', b'"uuid": "\\ud800', 1)


def _line_deep_field(line: bytes) -> bytes:
    return line.replace(b'"uuid": ', b'"extra": ' + b"[" * 100 + b"]" * 100 + b', "uuid": ', 1)


def _line_deep_whole(line: bytes) -> bytes:
    return line.replace(b'"uuid": ', b'"extra": ' + b"[" * DEEP + b"]" * DEEP + b', "uuid": ', 1)


def _line_bad_json(line: bytes) -> bytes:
    return line.replace(b'"uuid": ', b'"uuid": tru, "x": ', 1)


def _line_not_object(line: bytes) -> bytes:
    return b"[1, 2, 3]"


# corruption -> (edit of one JSON text, the field the rejection names)
CORRUPTIONS = {
    "bad byte": (_line_bad_byte, "uuid"),
    "lone surrogate": (_line_lone_surrogate, "uuid"),
    "deep field": (_line_deep_field, "extra"),
    "10,000 deep": (_line_deep_whole, "<row>"),
    "bad JSON": (_line_bad_json, "<row>"),
    "not an object": (_line_not_object, "<row>"),
}


@pytest.fixture(scope="module")
def good_lines(synth_set) -> list[bytes]:
    rows = list(read_rows(synth_set.sft_full))[:N_ROWS]
    return [json.dumps(r, ensure_ascii=False).encode("utf-8") for r in rows]


def _write(path: Path, lines: list[bytes]) -> Path:
    if path.suffix == ".json":
        path.write_bytes(b"[\n" + b",\n".join(lines) + b"\n]\n")
    else:
        path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_each_bad_record_is_one_rejected_row_in_every_command(good_lines):
    _each_bad_record(good_lines)


class _Lines(list):
    def __repr__(self) -> str:  # keep hypothesis reports readable
        return f"<{len(self)} good rows>"


def _each_bad_record(good_lines: list[bytes]) -> None:
    @settings(max_examples=25, deadline=None)
    @given(bad=st.dictionaries(st.integers(0, N_ROWS - 1), st.sampled_from(sorted(CORRUPTIONS)), min_size=1, max_size=6),
           suffix=st.sampled_from([".jsonl", ".json"]))
    def check(bad, suffix):
        _check_bad_records(_Lines(good_lines), bad, suffix)

    check()


def _check_bad_records(good_lines: list[bytes], bad: dict[int, str], suffix: str) -> None:
    lines = [CORRUPTIONS[bad[i]][0](ln) if i in bad else ln for i, ln in enumerate(good_lines)]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        src = _write(d / f"in{suffix}", lines)
        n_good = N_ROWS - len(bad)

        rep = validate_split_file(src, "sft", "skip", d / "rej", out=d / "valid.jsonl")
        assert (rep.n_in, rep.n_out, rep.n_rejected) == (N_ROWS, n_good, len(bad))
        rejects = [json.loads(x) for x in (d / "rej" / "in.rejects.jsonl").read_text().splitlines()]
        named = {r["index"]: r["errors"][0]["field"] for r in rejects}
        assert sorted(named) == sorted(bad)
        assert all(named[i].startswith(CORRUPTIONS[k][1]) for i, k in bad.items()), named
        kept = [json.dumps(r, ensure_ascii=False).encode() for r in read_rows(d / "valid.jsonl")]
        assert kept == [ln for i, ln in enumerate(good_lines) if i not in bad]

        conv = convert_file(src, d / "lf" / "out.jsonl", on_error="skip")
        assert (conv.rows_in, conv.rows_out, conv.rows_rejected) == (N_ROWS, n_good, len(bad))
        assert sum(1 for _ in read_rows(d / "lf" / "out.jsonl")) == n_good

        st_ = collect(read_rows(src), "sft")
        assert (st_.rows, st_.unparsed) == (N_ROWS, len(bad))

        funnel = prepare(src, d / "prep", opts=PrepareOptions(eval_size=2), on_error="skip")
        assert (funnel.raw, funnel.rejected) == (N_ROWS, len(bad))
        assert sorted(r["index"] for r in read_rows(d / "prep" / "rejects.jsonl")) == sorted(bad)


def test_fail_mode_names_the_first_bad_row_and_writes_nothing(good_lines, tmp_path):
    from slca.data.schemas import DataValidationError

    lines = list(good_lines)
    lines[5] = _line_bad_byte(lines[5])
    lines[9] = _line_deep_whole(lines[9])
    src = _write(tmp_path / "in.jsonl", lines)
    with pytest.raises(DataValidationError) as ei:
        validate_split_file(src, "sft", "fail", out=tmp_path / "valid.jsonl")
    assert str(ei.value).startswith(f"{src}: 2 of {N_ROWS} rows invalid; first: row 5: uuid:")
    with pytest.raises(DataValidationError, match="row 5: uuid"):
        convert_file(src, tmp_path / "lf" / "o.jsonl")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["in.jsonl"]  # not even the output folder


def test_a_parquet_row_that_is_not_utf8_is_rejected_by_itself(good_lines, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(x) for x in good_lines]
    table = pa.Table.from_pylist(rows)
    uuids = [r["uuid"].encode() for r in rows]
    uuids[7] = b"\xff\xfe" + uuids[7]
    table = table.set_column(table.schema.get_field_index("uuid"), "uuid", pa.array(uuids, pa.binary()).view(pa.string()))
    pq.write_table(table, tmp_path / "in.parquet")
    rep = validate_split_file(tmp_path / "in.parquet", "sft", "skip", tmp_path / "rej")
    assert (rep.n_in, rep.n_out, rep.n_rejected) == (N_ROWS, N_ROWS - 1, 1)
    (rej,) = read_rows(tmp_path / "rej" / "in.rejects.jsonl")
    assert rej["index"] == 7 and "column uuid" in rej["errors"][0]["reason"]


DEEP_JSON = "[" * DEEP + "]" * DEEP


@pytest.mark.parametrize("levels", [80, DEEP])
@pytest.mark.parametrize("where", ["tools", "gold_tool_calls", "tool_schemas", "prompt"])
def test_deep_nesting_inside_an_rl_field_is_a_rejected_row(synth_set, tmp_path, where, levels):
    rows = list(read_rows(synth_set.rl))[:6]
    gt = rows[2]["reward_model"]["ground_truth"]
    text = "[" * levels + "]" * levels
    if where == "tools":
        rows[2]["tools"] = text
    elif where == "prompt":
        rows[2]["prompt"] = json.loads("[" * 80 + "]" * 80)
    else:
        gt[where] = text
    write_rows(tmp_path / "rl.jsonl", iter(rows))
    rep = validate_split_file(tmp_path / "rl.jsonl", "rl", "skip", tmp_path / "rej")
    assert (rep.n_in, rep.n_rejected) == (6, 1)
    (rej,) = read_rows(tmp_path / "rej" / "rl.rejects.jsonl")
    assert rej["index"] == 2 and where in rej["errors"][0]["field"]
    assert collect(read_rows(tmp_path / "rl.jsonl"), "rl").unparsed == 1


@pytest.mark.parametrize("body", [DEEP_JSON, "(" * 3000 + ")" * 3000, "{'a': " * 200 + "1" + "}" * 200,
                                  "[" * 70 + "]" * 70])
def test_a_deep_tool_call_or_tools_block_is_a_rejected_row(good_lines, tmp_path, body):
    rows = [json.loads(x) for x in good_lines]
    turn = next(k for k, t in enumerate(rows[4]["conversations"]) if t["value"].startswith("<tool_call>"))
    rows[4]["conversations"][turn]["value"] = f"<tool_call>\n{body}\n</tool_call>"
    rows[6]["conversations"][0]["value"] = f"<tools>\n{body}\n</tools>"
    write_rows(tmp_path / "in.jsonl", iter(rows))
    rep = convert_file(tmp_path / "in.jsonl", tmp_path / "o.jsonl", on_error="skip")
    assert (rep.rows_out, rep.rows_rejected) == (N_ROWS - 2, 2)
    fields = {r["index"]: r["errors"][0]["field"] for r in read_rows(tmp_path / "o.rejects.jsonl")}
    assert fields == {4: f"conversations[{turn}].value", 6: "conversations[0].value"}


JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                       | st.text(st.sampled_from('ab"\\[]{},: \n\t\u00e9'), max_size=8),
                       lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(st.sampled_from('a"\\[]{,'), max_size=4), c,
                                                                         max_size=3), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(JSONISH, max_size=6), st.booleans())
def test_array_elements_are_cut_where_the_json_decoder_cuts_them(values, indent):
    from slca.data.io import _array_elements

    text = json.dumps(values, indent=2 if indent else None, ensure_ascii=False)
    spans = _array_elements("x.json", text)
    assert [json.loads(text[a:b]) for a, b in spans] == values


def test_parquet_rows_skip_the_walk_only_when_the_schema_is_shallow(good_lines, tmp_path):
    """The reader vouches for parquet rows (strict UTF-8, nesting bounded by the schema), so
    validation skips walking them; a schema nested beyond the cap is walked and rejected."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from slca.data.guard import MAX_DEPTH
    from slca.data.io import CheckedRow

    rows = [json.loads(x) for x in good_lines[:3]]
    write_rows(tmp_path / "ok.parquet", iter(rows))
    assert all(type(r) is CheckedRow for r in read_rows(tmp_path / "ok.parquet"))
    assert list(read_rows(tmp_path / "ok.parquet")) == rows
    deep = 1
    for _ in range(MAX_DEPTH + 2):
        deep = {"k": deep}
    pq.write_table(pa.Table.from_pylist([{**r, "deep": deep} for r in rows]), tmp_path / "deep.parquet")
    assert not any(type(r) is CheckedRow for r in read_rows(tmp_path / "deep.parquet"))
    rep = validate_split_file(tmp_path / "deep.parquet", "sft", "skip", tmp_path / "rej")
    assert rep.n_rejected == 3
    assert all(r["errors"][0]["field"].startswith("deep.k.k") for r in read_rows(tmp_path / "rej" / "deep.rejects.jsonl"))


@pytest.mark.parametrize("arguments, reason", [
    (json.dumps("[" * 900 + "]" * 900), "nested deeper than"),
    (json.dumps('{"q": "\\ud800"}'), "not valid UTF-8"),
    ('{"q": "\\udc00 alone"}', "not valid UTF-8"),
    ('{"n": 1' + "0" * 5000 + "}", "neither JSON nor a Python literal"),
])
def test_call_arguments_that_hide_deep_nesting_or_surrogates_are_a_rejected_row(arguments, reason):
    from slca.data.schemas import validate_row

    body = '{"name": "f", "arguments": %s}' % arguments
    conv = [{"from": "system", "value": '<tools>\n{"name": "f"}\n</tools>'}, {"from": "human", "value": "hi"},
            {"from": "gpt", "value": f"<tool_call>\n{body}\n</tool_call>"}]
    (err,) = validate_row({"conversations": conv}, "sft", 3)
    assert (err.index, err.field) == (3, "conversations[2].value") and reason in err.reason
