"""Validation of one call against the row's tool schemas, with API-style error texts (docs/method.md#tool-simulators steps 2–4).

The texts of the first three errors are the reference simulator's; the type/enum/unexpected
checks are additions of the `schema` simulator (the reference never checks types).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from slca.sim.types import Call, ToolSpec, canonical_json


def invalid_format(reason: str) -> str:
    return f"Error: Invalid tool arguments format - {reason}"


def not_found(name: str) -> str:
    return f"Tool '{name}' not found in the current available tools set."


def missing_required(call: Call, spec: ToolSpec) -> list[str]:
    """Required parameter names (schema order) absent from the call's arguments."""
    required = spec.parameters.get("required")
    if not isinstance(required, list) or call.arguments is None:
        return []
    return [r for r in required if isinstance(r, str) and r not in call.arguments]


def precheck(call: Call, tools: Mapping[str, ToolSpec], *, check_types: bool = False) -> str | None:
    """Error text for a call that must not reach a simulator, else None.

    Order follows the reference: undecodable arguments, unknown tool, missing required
    parameters; then (when `check_types`) unexpected parameters and type/enum mismatches.
    """
    if call.arguments is None:
        return invalid_format(call.error or "undecodable arguments")
    spec = tools.get(call.name)
    if spec is None:
        return not_found(call.name)
    missing = missing_required(call, spec)
    if missing:
        return f"Tool '{call.name}' missing required parameters: {missing!r}"
    if not check_types:
        return None
    props = spec.parameters.get("properties")
    props = props if isinstance(props, Mapping) else {}
    if spec.parameters.get("additionalProperties") is False:
        extra = [k for k in call.arguments if k not in props]
        if extra:
            return f"Tool '{call.name}' got unexpected parameters: {extra!r}"
    for key, value in call.arguments.items():
        problem = value_error(value, props.get(key), key)
        if problem:
            return f"Tool '{call.name}' invalid parameter {problem}"
    return None


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value."""
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int subclass in Python
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def type_matches(value: Any, expected: str) -> bool:
    actual = json_type(value)
    if actual == expected:
        return True
    if expected == "number":
        return actual == "integer"
    if expected == "integer":  # JSON Schema counts 3.0 as an integer
        return actual == "number" and float(value).is_integer()
    return False


def value_error(value: Any, schema: Any, path: str) -> str | None:
    """First mismatch of `value` against a (sub)schema as "'<path>': <reason>", else None.

    Covers type (single or list), enum, nested object properties/required, array items and
    anyOf/oneOf/allOf; every other keyword is ignored (lenient, like a forgiving API).
    """
    if not isinstance(schema, Mapping):
        return None
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            if all(value_error(value, opt, path) for opt in options):
                return f"'{path}': value does not match any allowed form"
    for sub in schema.get("allOf") or ():
        problem = value_error(value, sub, path)
        if problem:
            return problem
    expected = schema.get("type")
    if isinstance(expected, str) or isinstance(expected, list):
        names = [expected] if isinstance(expected, str) else [t for t in expected if isinstance(t, str)]
        if names and not any(type_matches(value, t) for t in names):
            return f"'{path}': expected {' or '.join(names)}, got {json_type(value)}"
    enum = schema.get("enum")
    if isinstance(enum, list) and canonical_json(value) not in {canonical_json(e) for e in enum}:
        return f"'{path}': {canonical_json(value)} is not one of {canonical_json(enum)}"
    if isinstance(value, dict):
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        for req in schema.get("required") or ():
            if isinstance(req, str) and req not in value:
                return f"'{path}': missing required field '{req}'"
        for key, sub_value in value.items():
            problem = value_error(sub_value, props.get(key), f"{path}.{key}")
            if problem:
                return problem
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            problem = value_error(item, schema["items"], f"{path}[{i}]")
            if problem:
                return problem
    return None
