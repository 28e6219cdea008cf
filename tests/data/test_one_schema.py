"""One definition of a valid SFT row: validate, convert, prepare and stats accept and reject the
same rows, for the same reasons, on generated damage to real rows (uuid=123 was once accepted by
convert and refused by validate)."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from slca.data.convert import convert_file
from slca.data.io import read_rows, write_rows
from slca.data.prepare import PrepareOptions, prepare
from slca.data.stats import collect
from slca.data.validate import validate_split_file

N = 8
JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6)
    | st.sampled_from(["<tool_call>", "</tool_call>", "<tool_response>\nx\n</tool_response>", "<tools></tools>",
                       "system", "human", "gpt", "<tool_call>\n{'name': 'x'}\n</tool_call>"]),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(["from", "value", "name", "x"]), c, max_size=3),
    max_leaves=6)
TOP = ["uuid", "subset_name", "question", "target_tools", "conversations", "extra_column"]


def _damage(row: dict, where: str, turn: int, value) -> dict:
    row = copy.deepcopy(row)
    if where == "drop":
        row.pop("conversations", None)
    elif where in TOP:
        row[where] = value
    elif isinstance(row.get("conversations"), list) and row["conversations"] \
            and isinstance(row["conversations"][turn % len(row["conversations"])], dict):
        row["conversations"][turn % len(row["conversations"])][where] = value
    return row


def _indices(path: Path) -> dict[int, str]:
    return {r["index"]: r["errors"][0]["field"] for r in read_rows(path)} if path.exists() else {}


class _Rows(list):
    def __repr__(self) -> str:
        return f"<{len(self)} rows>"


def test_validate_convert_prepare_and_stats_agree_on_every_row(synth_set):
    base = _Rows(list(read_rows(synth_set.sft_full))[:N])

    @settings(max_examples=30, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, N - 1), st.sampled_from([*TOP, "drop", "from", "value"]),
                              st.integers(0, 20), JUNK), min_size=1, max_size=4))
    def check(damage):
        rows = list(base)
        for i, where, turn, value in damage:
            rows[i] = _damage(rows[i], where, turn, value)
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            write_rows(d / "in.jsonl", iter(rows))
            rep = validate_split_file(d / "in.jsonl", "sft", "skip", d / "v")
            by_validate = _indices(d / "v" / "in.rejects.jsonl")
            conv = convert_file(d / "in.jsonl", d / "c" / "out.jsonl", on_error="skip")
            by_convert = _indices(d / "c" / "out.rejects.jsonl")
            funnel = prepare(d / "in.jsonl", d / "p", opts=PrepareOptions(eval_size=0), on_error="skip")
            by_prepare = _indices(d / "p" / "rejects.jsonl")
            stats = collect(read_rows(d / "in.jsonl"), "sft")
        assert by_validate == by_convert == by_prepare
        assert rep.n_rejected == conv.rows_rejected == funnel.rejected == stats.unparsed == len(by_validate)
        assert rep.n_in == rep.n_out + rep.n_rejected == N

    check()


def test_a_numeric_uuid_is_refused_by_every_command(synth_set, tmp_path):
    rows = list(read_rows(synth_set.sft_full))[:4]
    rows[1] = {**rows[1], "uuid": 123}
    write_rows(tmp_path / "in.jsonl", iter(rows))
    assert validate_split_file(tmp_path / "in.jsonl", "sft", "skip", tmp_path / "v").n_rejected == 1
    assert convert_file(tmp_path / "in.jsonl", tmp_path / "c.jsonl", on_error="skip").rows_rejected == 1
    assert prepare(tmp_path / "in.jsonl", tmp_path / "p", opts=PrepareOptions(eval_size=1), on_error="skip").rejected == 1
    assert collect(read_rows(tmp_path / "in.jsonl"), "sft").unparsed == 1
    (rej,) = read_rows(tmp_path / "c.rejects.jsonl")
    assert rej["index"] == 1 and rej["errors"] == [{"field": "uuid", "reason": "wrong type: expected str, got int"}]
    assert json.loads(json.dumps(rej["row"]))["uuid"] == 123  # the rejected row is kept whole
