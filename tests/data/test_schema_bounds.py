"""Every field of the RL/eval row schema is type- and range-checked: each out-of-range or mistyped
value is refused naming its field, and the boundary values just inside each range are accepted
(slca/data/schemas.py, docs/method.md#rl-rows)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from slca.data.io import read_rows
from slca.data.schemas import validate_row

GT = "reward_model.ground_truth"


def _set(path: str, value: Any) -> Callable[[dict], None]:
    """An edit putting `value` at the dotted `path` of a row (created when absent)."""
    def run(row: dict) -> None:
        *parents, last = path.split(".")
        node = row
        for key in parents:
            node = node[key]
        node[last] = value
    return run


def _first_call(row: dict) -> dict:
    return json.loads(row["reward_model"]["ground_truth"]["gold_tool_calls"])[0][0]


def _gold_args(text: Any) -> Callable[[dict], None]:
    def run(row: dict) -> None:
        call = {**_first_call(row), "arguments": text}
        row["reward_model"]["ground_truth"]["gold_tool_calls"] = json.dumps([[call]])
    return run


def _response(edit: Callable[[dict], None]) -> Callable[[dict], None]:
    """An edit of the first recorded gold response."""
    def run(row: dict) -> None:
        records = json.loads(row["extra_info"]["gold_responses"])
        edit(records[0])
        row["extra_info"]["gold_responses"] = json.dumps(records)
    return run


# case -> (edit, field named, words of the reason)
REFUSED: dict[str, tuple[Callable[[dict], None], str, str]] = {
    "turn index true": (_set("extra_info.original_turn_index", True), "extra_info.original_turn_index", "whole number"),
    "turn index -5": (_set("extra_info.original_turn_index", -5), "extra_info.original_turn_index", "out of range: -5"),
    "turn index 3.0": (_set("extra_info.original_turn_index", 3.0), "extra_info.original_turn_index", "got float"),
    "turn index 2**63": (_set("extra_info.original_turn_index", 2**63), "extra_info.original_turn_index", "out of range"),
    "turn index null": (_set("extra_info.original_turn_index", None), "extra_info.original_turn_index", "got NoneType"),
    "index NaN": (_set("extra_info.index", float("nan")), "extra_info.index", "NaN is not a finite number"),
    "index -inf": (_set("extra_info.index", float("-inf")), "extra_info.index", "-Infinity is not a finite number"),
    "index -1": (_set("extra_info.index", -1), "extra_info.index", "out of range"),
    "index a string": (_set("extra_info.index", "3"), "extra_info.index", "got str"),
    "index false": (_set("extra_info.index", False), "extra_info.index", "got bool"),
    "need_tools_kwargs 1": (_set("extra_info.need_tools_kwargs", 1), "extra_info.need_tools_kwargs", "expected bool"),
    "source_key empty": (_set("extra_info.source_key", ""), "extra_info.source_key", "non-empty str"),
    "split a number": (_set("extra_info.split", 7), "extra_info.split", "non-empty str"),
    "gold_responses {{{": (_set("extra_info.gold_responses", "{{{"), "extra_info.gold_responses", "bad JSON"),
    "gold_responses empty text": (_set("extra_info.gold_responses", ""), "extra_info.gold_responses", "bad JSON"),
    "gold_responses an object": (_set("extra_info.gold_responses", '{"name": "x"}'), "extra_info.gold_responses",
                                 "expected list"),
    "gold_responses of numbers": (_set("extra_info.gold_responses", "[1, 2]"), "extra_info.gold_responses[0]",
                                  "expected object"),
    "gold response without a name": (_response(lambda r: r.pop("name")), "extra_info.gold_responses[0].name",
                                     "non-empty str"),
    "gold response arguments a list": (_response(lambda r: r.__setitem__("arguments", [1])),
                                       "extra_info.gold_responses[0].arguments", "expected object"),
    "gold response without a response": (_response(lambda r: r.pop("response")), "extra_info.gold_responses[0].response",
                                         "missing field"),
    "gold response with Infinity": (_set("extra_info.gold_responses", '[{"name": "f", "arguments": {"x": Infinity}, '
                                                                      '"response": "r"}]'),
                                    "extra_info.gold_responses[0].arguments.x", "Infinity is not a finite number"),
    "original_row {{{": (_set("extra_info.original_row", "{{{"), "extra_info.original_row", "bad JSON"),
    "original_row a list": (_set("extra_info.original_row", "[1]"), "extra_info.original_row", "expected object"),
    "original_row a number": (_set("extra_info.original_row", 5), "extra_info.original_row", "expected str"),
    "data_source a number": (_set("data_source", 3), "data_source", "non-empty str"),
    "style empty": (_set("reward_model.style", ""), "reward_model.style", "non-empty str"),
    "allowed tool empty name": (_set(f"{GT}.allowed_tools", [""]), f"{GT}.allowed_tools", "non-empty str"),
    "gold null": (_set(f"{GT}.gold_tool_calls", None), f"{GT}.gold_tool_calls", "got NoneType"),
    "gold a number": (_set(f"{GT}.gold_tool_calls", 5), f"{GT}.gold_tool_calls", "got int"),
    "gold arguments not JSON": (_gold_args("{oops"), f"{GT}.gold_tool_calls[0][0].arguments", "bad JSON"),
    "gold arguments a JSON list": (_gold_args("[1]"), f"{GT}.gold_tool_calls[0][0].arguments", "expected object"),
    "gold arguments a number": (_gold_args(5), f"{GT}.gold_tool_calls[0][0].arguments", "expected object"),
    "subset a list": (_set(f"{GT}.subset_name", ["tool_call"]), f"{GT}.subset_name", "unknown subset"),
}

ACCEPTED: dict[str, Callable[[dict], None]] = {
    "turn index 0": _set("extra_info.original_turn_index", 0),
    "turn index 2**63-1": _set("extra_info.original_turn_index", 2**63 - 1),
    "index 2**63-1": _set("extra_info.index", 2**63 - 1),
    "no recorded responses": _set("extra_info.gold_responses", "[]"),
    "recorded responses as a list": _set("extra_info.gold_responses", [{"name": "f", "arguments": {}, "response": {"a": 1}}]),
    "source row not kept": _set("extra_info.original_row", ""),
    "gold arguments as JSON text": _gold_args('{"city": "Paris"}'),
    "published extra_info": lambda row: row.__setitem__("extra_info", {"need_tools_kwargs": False, "original_turn_index": 1}),
    "no style": lambda row: row["reward_model"].pop("style"),
    "a gold integer beyond 64 bits": _gold_args({"amount": 10**40}),
}


@pytest.fixture(scope="module")
def base(synth_set) -> dict:
    row = next(r for r in read_rows(synth_set.rl) if r["reward_model"]["ground_truth"]["subset_name"] == "tool_call")
    row = json.loads(json.dumps(row))  # a plain dict, not the reader's vouched row
    assert validate_row(row, "rl") == [] and json.loads(row["extra_info"]["gold_responses"])
    return row


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_each_mistyped_or_out_of_range_field_is_refused_by_name(base, case):
    edit, field, reason = REFUSED[case]
    row = copy.deepcopy(base)
    edit(row)
    for split in ("rl", "eval"):
        errs = validate_row(row, split, 9)
        assert any(e.index == 9 and e.field == field and reason in e.reason for e in errs), (case, errs)


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_values_just_inside_each_range_are_accepted(base, case):
    row = copy.deepcopy(base)
    ACCEPTED[case](row)
    assert validate_row(row, "rl") == []


def test_the_issue_rows_are_refused_in_one_pass(base):
    row = copy.deepcopy(base)
    row["extra_info"].update(original_turn_index=True, index=float("nan"), gold_responses="{{{")
    # the guard stops at the NaN (nothing later can handle it); without it, both other fields are named
    assert [e.field for e in validate_row(row, "rl")] == ["extra_info.index"]
    row["extra_info"]["index"] = 0
    assert [e.field for e in validate_row(row, "rl")] == ["extra_info.original_turn_index", "extra_info.gold_responses"]
