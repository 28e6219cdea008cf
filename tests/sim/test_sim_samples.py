"""Every tool of the reference RL preview rows gets a valid synthesised response (issue 6 item 4)."""

from __future__ import annotations

import json
import random

import jsonschema
import pytest

from slca.config.groups.simulator import SchemaSimulator as SchemaCfg
from slca.sim import build_simulator
from slca.sim.synth import example_arguments
from slca.sim.types import index_tools
from tests.reference import RL_PREVIEW

PREVIEW = RL_PREVIEW
ROWS = [json.loads(line) for line in PREVIEW.read_text().splitlines() if line.strip()]


def _wrong_type(schema: dict) -> object:
    # A value of a JSON type the parameter does not accept.
    return 12345 if schema.get("type") == "string" else "not-a-number" if schema.get("type") else None


@pytest.mark.parametrize("row_index", range(len(ROWS)))
def test_every_sample_tool_answers_a_call_with_its_required_params(row_index):
    row = ROWS[row_index]
    specs = index_tools(row["tools"])
    assert specs, "row without tools"
    sim = build_simulator(SchemaCfg(), tool_schemas=row["tools"])
    for name, spec in specs.items():
        args = example_arguments(spec, random.Random(name))
        assert set(args) == set(spec.parameters.get("required", []))
        jsonschema.validate(args, spec.parameters)  # independent check of the filled call
        obs = sim.respond({"name": name, "arguments": args})
        assert obs.kind == "synthesised", obs.text
        body = json.loads(obs.text)
        assert body["status"] == "success" and body["tool"] == name and body["input"] == args
        assert sim.respond({"name": name, "arguments": json.dumps(args)}).text == obs.text
        for key in args:
            prop = spec.parameters.get("properties", {}).get(key, {})
            if "type" in prop:
                bad = sim.respond({"name": name, "arguments": {**args, key: _wrong_type(prop)}})
                assert bad.kind == "error" and f"'{key}'" in bad.text


def test_preview_covers_several_tool_sets():
    assert len({name for row in ROWS for name in index_tools(row["tools"])}) >= 20
