"""BFCL's shipped single-turn data read into slca entries, rows and JSON Schema tools; bad files
are refused with one line naming the file, the line and the field."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from slca.evaluation.bfcl import CATEGORIES, BfclDataError, data_dir, load_category, to_tool
from slca.evaluation.bfcl.data import ORDER, to_json_schema
from slca.rollout import RolloutConfig
from slca.rollout.protocol import protocol_prompt_fn
from slca.toolcall.prompts import BFCL_PYTHON_HINT

# Entries per category in bfcl-eval 2026.3.23 (counted from its files, `wc -l` plus the unterminated last line).
SIZES = {
    "simple": 400, "multiple": 200, "parallel": 200, "parallel_multiple": 200, "irrelevance": 240,
    "live_simple": 258, "live_multiple": 1053, "live_parallel": 16, "live_parallel_multiple": 24,
    "live_irrelevance": 884, "live_relevance": 16,
}


def test_every_single_turn_category_loads_all_its_entries_with_their_answers() -> None:
    assert list(ORDER) == list(SIZES) and sorted(CATEGORIES) == sorted(SIZES)
    for name, size in SIZES.items():
        entries = load_category(name)
        assert len(entries) == size, name
        assert len({e.id for e in entries}) == size
        assert all(e.category == name and e.messages[-1]["role"] == "user" for e in entries)
        if CATEGORIES.get(name).has_answers:
            assert all(e.possible_answer for e in entries)
        else:
            assert all(e.possible_answer is None for e in entries)
    assert load_category("parallel", limit=3) == load_category("parallel")[:3]


def test_answers_are_paired_by_id_not_by_position() -> None:
    raw = {}
    for line in (data_dir() / "possible_answer" / "BFCL_v4_live_multiple.json").read_text().splitlines():
        obj = json.loads(line)
        raw[obj["id"]] = obj["ground_truth"]
    for e in load_category("live_multiple"):
        assert list(e.possible_answer) == raw[e.id]


def test_every_converted_schema_is_valid_json_schema_and_keeps_bfcls_meaning() -> None:
    meta = jsonschema.Draft7Validator(jsonschema.Draft7Validator.META_SCHEMA)  # one validator for all
    seen: set[str] = set()  # live entries repeat the same functions: each distinct schema is checked once
    checked = 0
    for name in ORDER:
        for entry in load_category(name):
            for fn, tool in zip(entry.functions, entry.tools):
                params = tool["function"]["parameters"]
                key = json.dumps(params, sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    assert meta.is_valid(params), (entry.id, fn["name"])
                assert tool["type"] == "function" and tool["function"]["name"] == fn["name"]
                assert params.get("type", "object") == "object"
                assert set(params.get("properties", {})) == set(fn["parameters"].get("properties", {}))
                checked += 1
    assert checked > 8000


def test_bfcl_dialect_types_become_json_schema_types_recursively_and_the_input_is_left_alone() -> None:
    schema = {"type": "dict", "required": ["a"], "properties": {
        "a": {"type": "float", "default": 1.0}, "b": {"type": "tuple", "items": {"type": "dict", "properties": {"c": {"type": "any"}}}},
        "d": {"type": "array", "items": {"type": "float"}}, "e": {"type": "string", "enum": ["x", "y"]},
    }}
    before = json.dumps(schema, sort_keys=True)
    assert to_json_schema(schema) == {"type": "object", "required": ["a"], "properties": {
        "a": {"type": "number", "default": 1.0}, "b": {"type": "array", "items": {"type": "object", "properties": {"c": {}}}},
        "d": {"type": "array", "items": {"type": "number"}}, "e": {"type": "string", "enum": ["x", "y"]},
    }}
    assert json.dumps(schema, sort_keys=True) == before
    tool = to_tool({"name": "f", "description": "d", "parameters": schema})
    validator = jsonschema.Draft7Validator(tool["function"]["parameters"])
    assert validator.is_valid({"a": 2, "b": [{"c": [1]}], "d": [1, 2.5], "e": "x"})
    assert not validator.is_valid({"a": "2"}) and not validator.is_valid({"b": [], "a": 1, "e": "z"})


def test_rows_are_built_into_prompts_by_slcas_own_protocol_under_each_system_prompt() -> None:
    entry = load_category("live_simple")[0]
    row = entry.row()
    assert row["extra_info"] == {"bfcl_id": entry.id, "category": "live_simple"}
    cfg = RolloutConfig()
    messages, tools = protocol_prompt_fn(system_prompt="bfcl_default")(row, cfg)
    name = entry.functions[0]["name"]
    assert tools is None  # the BFCL prompt shows the functions itself
    assert messages[0]["role"] == "system" and name in messages[0]["content"] and BFCL_PYTHON_HINT in messages[0]["content"]
    assert messages[-1] == {"role": "user", "content": entry.messages[-1]["content"]}
    messages, tools = protocol_prompt_fn(system_prompt="none")(row, cfg)
    assert messages[0]["role"] == "user" and [t["function"]["name"] for t in tools] == [name]  # the chat template shows them
    with_system = next(e for e in load_category("live_multiple") if e.messages[0]["role"] == "system")
    messages, _ = protocol_prompt_fn(system_prompt="bfcl_default")(with_system.row(), cfg)
    assert messages[0]["content"].endswith(with_system.messages[0]["content"])  # the entry's own system text follows


def _root(tmp_path: Path, questions: list[str], answers: list[str] | None) -> Path:
    (tmp_path / "possible_answer").mkdir(exist_ok=True)
    (tmp_path / "BFCL_v4_simple_python.json").write_text("\n".join(questions) + "\n")
    if answers is not None:
        (tmp_path / "possible_answer" / "BFCL_v4_simple_python.json").write_text("\n".join(answers) + "\n")
    return tmp_path


GOOD_Q = json.dumps({"id": "s0", "question": [[{"role": "user", "content": "hi"}]],
                     "function": [{"name": "f", "parameters": {"type": "dict", "properties": {}}}]})
GOOD_A = json.dumps({"id": "s0", "ground_truth": [{"f": {}}]})


@pytest.mark.parametrize(
    ("questions", "answers", "mentions"),
    [
        (["{not json"], [GOOD_A], ["BFCL_v4_simple_python.json:1", "invalid JSON"]),
        ([GOOD_Q, json.dumps({"question": []})], [GOOD_A], ["BFCL_v4_simple_python.json:2", "id"]),
        ([json.dumps({"id": "s0", "question": "hi", "function": []})], [GOOD_A], ["simple_python.json:1", "question"]),
        ([json.dumps({"id": "s0", "question": [[{"role": "user"}]], "function": []})], [GOOD_A], ["simple_python.json:1", "question[0][0]"]),
        ([json.dumps({"id": "s0", "question": [[{"role": "user", "content": "x"}]], "function": [{"name": "f"}]})], [GOOD_A],
         [":1", "function[0]"]),
        ([GOOD_Q], [json.dumps({"id": "other", "ground_truth": []})], ["simple_python.json:1", "'s0' has no possible answer"]),
        ([GOOD_Q], [json.dumps({"id": "s0", "ground_truth": [{"f": 1}]})], ["possible_answer/BFCL_v4_simple_python.json:1", "ground_truth[0]"]),
        ([GOOD_Q], None, ["possible_answer/BFCL_v4_simple_python.json", "cannot read"]),
    ],
)
def test_a_bad_data_file_is_refused_in_one_line_naming_file_line_and_field(
    tmp_path: Path, questions: list[str], answers: list[str] | None, mentions: list[str]
) -> None:
    root = _root(tmp_path, questions, answers)
    with pytest.raises(BfclDataError) as info:
        load_category("simple", root=root)
    message = str(info.value)
    assert "\n" not in message
    for m in mentions:
        assert m in message, message


def test_a_good_hand_written_file_loads_and_an_unknown_category_is_named(tmp_path: Path) -> None:
    (entry,) = load_category("simple", root=_root(tmp_path, [GOOD_Q], [GOOD_A]))
    assert entry.id == "s0" and entry.possible_answer == ({"f": {}},)
    with pytest.raises(BfclDataError, match="unknown BFCL category 'exec_simple'"):
        load_category("exec_simple")
