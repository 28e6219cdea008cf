"""Simulator registry, config-driven construction and the `replay` simulator."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from slca.config.groups.simulator import ReplaySimulator as ReplayCfg
from slca.sim import SIMULATORS, Simulator, build_simulator, get_simulator, register_simulator

TOOLS = [{"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}]
RECORDED = [{"name": "f", "arguments": {"x": 1}, "response": "one"}]


def test_registry_names_and_lookup():
    assert {"schema", "sgls", "replay"} <= set(SIMULATORS)
    assert get_simulator("schema").name == "schema"
    with pytest.raises(KeyError, match="unknown simulator 'nope'"):
        get_simulator("nope")


def test_duplicate_registration_is_refused():
    with pytest.raises(ValueError, match="already registered"):
        @register_simulator("schema")
        class Again(Simulator):  # noqa: F841
            def answer(self, call, tools, recorded):
                return "", "ok"


def test_build_from_mapping_validates_the_config():
    s = build_simulator({"name": "replay", "max_response_chars": 100})
    assert isinstance(s, get_simulator("replay")) and s.cfg.max_response_chars == 100
    with pytest.raises(ValidationError):
        build_simulator({"name": "schema", "bogus": 1})
    with pytest.raises(ValidationError):
        build_simulator({"name": "psychic"})


def test_replay_answers_only_recorded_calls():
    s = build_simulator(ReplayCfg(), tool_schemas=TOOLS, row_context={"recorded": RECORDED})
    hit = s.respond({"name": "f", "arguments": '{"x": 1}'})
    assert (hit.kind, hit.text) == ("recorded", "one")
    miss = s.respond({"name": "f", "arguments": {"x": 2}})
    assert miss.kind == "error" and "no recorded response" in miss.text
    # a tool that is not even defined gets the same answer: replay knows recordings only
    assert "no recorded response" in s.respond({"name": "g", "arguments": {}}).text
    bad = s.respond({"name": "f", "arguments": "{x"})
    assert bad.kind == "error" and bad.text.startswith("Error: Invalid tool arguments format")
