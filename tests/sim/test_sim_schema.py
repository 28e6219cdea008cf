"""`schema` simulator: error classes, recorded hits, determinism, truncation (docs/method.md#tool-simulators, issue 6 item 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from slca.config.groups.simulator import SchemaSimulator as SchemaCfg
from slca.sim import build_simulator, truncate_middle
from slca.sim.truncate import MARKER
from slca.toolcall.types import ToolCall

REPO = Path(__file__).resolve().parents[2]

TOOLS = [
    {"type": "function", "function": {
        "name": "calc-add", "description": "Add two numbers",
        "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "number"}},
                       "required": ["a", "b"]}}},
    {"name": "weather", "description": "Get the weather for a city.",  # bare form, no envelope
     "parameters": {"type": "object", "additionalProperties": False, "required": ["city"],
                    "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]},
                                   "days": {"type": "array", "items": {"type": "integer"}},
                                   "opts": {"type": "object", "properties": {"hourly": {"type": "boolean"}},
                                            "required": ["hourly"]}}}},
    {"type": "function", "function": {
        "name": "lookup", "description": "Look something up",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        "outputSchema": {"type": "object", "required": ["hits"],
                         "properties": {"hits": {"type": "integer", "minimum": 5, "maximum": 9}}}}},
]


def sim(**cfg):
    return build_simulator(SchemaCfg(**cfg), tool_schemas=TOOLS)


def test_unknown_tool_is_an_api_error():
    obs = sim().respond({"name": "calc-mul", "arguments": {"a": 1, "b": 2}})
    assert obs.kind == "error" and obs.is_error
    assert obs.text == "Tool 'calc-mul' not found in the current available tools set."


@pytest.mark.parametrize("raw", ['{"a": 1, "b":', '[1, 2]', '"text"', "12"])
def test_arguments_that_are_not_a_json_object(raw):
    obs = sim().respond({"name": "calc-add", "arguments": raw})
    assert obs.kind == "error"
    assert obs.text.startswith("Error: Invalid tool arguments format - ")


def test_missing_required_parameters_are_named():
    obs = sim().respond({"name": "calc-add", "arguments": {"b": 2}})
    assert obs.text == "Tool 'calc-add' missing required parameters: ['a']"
    obs = sim().respond({"name": "calc-add", "arguments": None})
    assert obs.text == "Tool 'calc-add' missing required parameters: ['a', 'b']"


@pytest.mark.parametrize("name, args, fragment", [
    ("calc-add", {"a": "1", "b": 2}, "'a': expected integer, got string"),
    ("calc-add", {"a": True, "b": 2}, "'a': expected integer, got boolean"),
    ("calc-add", {"a": 2.5, "b": 2}, "'a': expected integer, got number"),
    ("calc-add", {"a": 1, "b": [2]}, "'b': expected number, got array"),
    ("weather", {"city": 7}, "'city': expected string, got integer"),
    ("weather", {"city": "Oslo", "unit": "k"}, "'unit': \"k\" is not one of [\"c\",\"f\"]"),
    ("weather", {"city": "Oslo", "days": [1, "2"]}, "'days[1]': expected integer, got string"),
    ("weather", {"city": "Oslo", "opts": {}}, "'opts': missing required field 'hourly'"),
    ("weather", {"city": "Oslo", "opts": {"hourly": "yes"}}, "'opts.hourly': expected boolean, got string"),
])
def test_mistyped_arguments_name_the_parameter_and_type(name, args, fragment):
    obs = sim().respond({"name": name, "arguments": args})
    assert obs.kind == "error"
    assert obs.text == f"Tool '{name}' invalid parameter {fragment}"


def test_unexpected_parameter_when_schema_forbids_extras():
    obs = sim().respond({"name": "weather", "arguments": {"city": "Oslo", "country": "NO"}})
    assert obs.text == "Tool 'weather' got unexpected parameters: ['country']"
    # calc-add does not forbid extras, and 3.0 counts as an integer, ints as numbers
    assert sim().respond({"name": "calc-add", "arguments": {"a": 3.0, "b": 1, "c": 0}}).kind == "synthesised"


def test_valid_call_gets_a_synthesised_json_response_echoing_the_input():
    obs = sim().respond(ToolCall("weather", {"city": "Oslo", "unit": "c", "opts": {"hourly": True}}))
    assert obs.kind == "synthesised" and not obs.truncated
    body = json.loads(obs.text)
    assert body["status"] == "success" and body["tool"] == "weather"
    assert body["input"] == {"city": "Oslo", "unit": "c", "opts": {"hourly": True}}
    assert isinstance(body["result"], dict) and body["result"]


def test_declared_output_schema_shapes_the_result():
    for q in ("a", "b", "c", "d"):
        result = json.loads(sim().respond({"name": "lookup", "arguments": {"q": q}}).text)["result"]
        assert set(result) == {"hits"} and 5 <= result["hits"] <= 9


def test_hint_words_shape_results():
    tools = [{"name": "srv-is_prime", "description": "Check if a number is prime",
              "parameters": {"properties": {"n": {"type": "integer"}}}},
             {"name": "srv-search_docs", "description": "Search the docs",
              "parameters": {"properties": {"query": {"type": "string"}}}}]
    s = build_simulator(SchemaCfg(), tool_schemas=tools)
    assert isinstance(json.loads(s.respond({"name": "srv-is_prime", "arguments": {"n": 7}}).text)["result"]["value"],
                      bool)
    items = json.loads(s.respond({"name": "srv-search_docs", "arguments": {"query": "grpo"}}).text)["result"]["items"]
    assert items and all(item["title"].startswith("grpo #") for item in items)


def test_same_call_same_text_different_call_different_text():
    a = sim().respond({"name": "calc-add", "arguments": {"a": 1, "b": 2}})
    # key order and JSON-string arguments do not change the call's identity
    b = sim().respond(ToolCall("calc-add", {"b": 2, "a": 1}))
    c = sim().respond({"name": "calc-add", "arguments": '{"b": 2, "a": 1}'})
    assert a.text == b.text == c.text
    assert sim().respond({"name": "calc-add", "arguments": {"a": 1, "b": 3}}).text != a.text
    assert sim(seed=1).respond({"name": "calc-add", "arguments": {"a": 1, "b": 2}}).text != a.text


def test_determinism_across_processes():
    code = ("import json; from slca.sim import build_simulator; "
            "from slca.config.groups.simulator import SchemaSimulator as C; "
            f"s = build_simulator(C(seed=7), tool_schemas={json.dumps(TOOLS)!r}); "
            "print(json.dumps([s.respond({'name': n, 'arguments': a}).text for n, a in "
            "[('calc-add', {'a': 4, 'b': 0.5}), ('weather', {'city': 'Lima'}), ('lookup', {'q': 'x'})]]))")
    outs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(REPO)}
        outs.append(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                   cwd=REPO, check=True).stdout)
    assert outs[0] == outs[1]
    local = build_simulator(SchemaCfg(seed=7), tool_schemas=json.dumps(TOOLS))
    assert json.loads(outs[0])[1] == local.respond({"name": "weather", "arguments": {"city": "Lima"}}).text


def test_recorded_response_wins_for_a_matching_call():
    recorded = [{"name": "calc-add", "arguments": '{"a": 1, "b": 2}', "response": "3"},
                {"name": "weather", "arguments": {"city": "Oslo"}, "response": {"temp": 4}}]
    s = build_simulator(SchemaCfg(), tool_schemas=TOOLS, row_context={"recorded": recorded})
    hit = s.respond({"name": "calc-add", "arguments": {"b": 2, "a": 1}})
    assert (hit.kind, hit.text) == ("recorded", "3")
    assert json.loads(s.respond({"name": "weather", "arguments": {"city": "Oslo"}}).text) == {"temp": 4}
    assert s.respond({"name": "calc-add", "arguments": {"a": 1, "b": 2.5}}).kind == "synthesised"
    # a per-call `recorded` replaces the row's
    assert sim().respond({"name": "calc-add", "arguments": {"a": 1, "b": 2}}, recorded=recorded).text == "3"
    assert s.respond({"name": "calc-add", "arguments": {"a": 1, "b": 2}}, recorded=[]).kind == "synthesised"


def test_errors_come_before_recorded_responses():
    recorded = [{"name": "calc-add", "arguments": {"a": "x", "b": 2}, "response": "bogus"}]
    obs = sim().respond({"name": "calc-add", "arguments": {"a": "x", "b": 2}}, recorded=recorded)
    assert obs.kind == "error"


def test_truncation_keeps_head_and_tail_and_reports_it():
    text, cut = truncate_middle("abcdefghij" * 10, 20)
    assert cut and text == "abcdefghij" + MARKER + "abcdefghij"
    assert truncate_middle("x" * 20, 20) == ("x" * 20, False)
    long = "H" * 30 + "m" * 500 + "T" * 30
    s = build_simulator(SchemaCfg(max_response_chars=60), tool_schemas=TOOLS,
                        row_context={"recorded": [{"name": "lookup", "arguments": {"q": "z"}, "response": long}]})
    obs = s.respond({"name": "lookup", "arguments": {"q": "z"}})
    assert obs.truncated and obs.kind == "recorded" and obs.n_chars == len(long)
    assert obs.text == "H" * 30 + MARKER + "T" * 30
    short = s.respond({"name": "nope", "arguments": {}})
    assert not short.truncated and short.n_chars == len(short.text)


def test_respond_many_keeps_order_and_per_call_tools_override():
    s = build_simulator(SchemaCfg())  # no row tools: everything unknown
    assert s.respond({"name": "calc-add", "arguments": {"a": 1, "b": 2}}).kind == "error"
    calls = [{"name": "calc-add", "arguments": {"a": 1, "b": 2}}, {"name": "x", "arguments": {}},
             ToolCall("weather", {"city": "Rome"})]
    obs = s.respond_many(calls, tools=TOOLS)
    assert [o.kind for o in obs] == ["synthesised", "error", "synthesised"]
    assert obs[0].text == sim().respond(calls[0]).text
    assert s.respond_many([], tools=TOOLS) == []


def test_any_object_with_name_and_arguments_is_a_call():
    class Obj:
        name = "calc-add"
        arguments = {"a": 1, "b": 2}

    assert sim().respond(Obj()).text == sim().respond({"name": "calc-add", "parameters": {"a": 1, "b": 2}}).text
