"""Deterministic synthesis of JSON values from schemas, seeded by the call (the `schema` simulator).

Everything random here draws from a `random.Random` seeded by sha256(seed, name, canonical args),
so the same call gives the same text in every process, whatever PYTHONHASHSEED is.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import random
import re
from collections.abc import Mapping
from typing import Any

from slca.sim.types import ToolSpec, canonical_json

_MAX_DEPTH = 4
_BASE_DATE = _dt.date(2024, 1, 1)
# Keys under which MCP/OpenAPI-style tool definitions describe their output.
_OUTPUT_KEYS = ("outputSchema", "output_schema", "returns", "response_schema")
_BOOL_HINTS = {"check", "checks", "whether", "verify", "validate", "exists", "available"}
_NAME_BOOL_HINTS = _BOOL_HINTS | {"is", "has"}  # too common in prose to read from descriptions
_LIST_HINTS = {"list", "search", "find", "query", "examples", "browse", "recommend", "lookup", "all"}
_NUMBER_HINTS = {
    "add", "sum", "subtract", "sub", "multiply", "mul", "divide", "div", "calculate", "compute",
    "count", "convert", "power", "root", "factorial", "log", "sin", "cos", "tan", "gcd", "lcm",
    "price", "rate", "total", "average", "distance", "temperature", "score",
}


def call_rng(seed: int, name: str, arguments: Mapping[str, Any]) -> random.Random:
    """A generator seeded by sha256 of (seed, tool name, canonical arguments)."""
    digest = hashlib.sha256(canonical_json([seed, name, arguments]).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def _hex(rng: random.Random, n: int = 8) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _date(rng: random.Random) -> _dt.date:
    return _BASE_DATE + _dt.timedelta(days=rng.randrange(730))


def _string(schema: Mapping[str, Any], rng: random.Random, name: str) -> str:
    fmt = schema.get("format")
    if fmt == "date":
        return _date(rng).isoformat()
    if fmt == "date-time":
        return f"{_date(rng).isoformat()}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z"
    if fmt == "email":
        return f"user{rng.randrange(1000)}@example.com"
    if fmt in ("uri", "url"):
        return f"https://example.com/{name}/{_hex(rng, 6)}"
    text = f"{name}-{_hex(rng, 6)}"
    lo = schema.get("minLength")
    return text.ljust(lo, "x") if isinstance(lo, int) and lo > len(text) else text


def _num(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _bounds(schema: Mapping[str, Any], lo: float, hi: float, step: float) -> tuple[float, float]:
    """Inclusive sampling bounds from minimum/maximum (exclusive ones moved inward by `step`)."""
    ex_lo, ex_hi = _num(schema.get("exclusiveMinimum")), _num(schema.get("exclusiveMaximum"))
    low = _num(schema.get("minimum"))
    low = low if low is not None else (ex_lo + step if ex_lo is not None else None)
    high = _num(schema.get("maximum"))
    high = high if high is not None else (ex_hi - step if ex_hi is not None else None)
    if low is None and high is None:
        return lo, hi
    if low is None:
        return min(lo, high - (hi - lo)), high
    if high is None:
        return low, max(hi, low + (hi - lo))
    return low, max(low, high)


def sample_value(schema: Any, rng: random.Random, name: str = "value", *, required_only: bool = False,
                 depth: int = 0) -> Any:
    """A value valid for `schema` (type, enum, const, format, bounds, nested objects/arrays).

    `required_only` fills only the required properties of objects (used to build minimal calls).
    """
    if not isinstance(schema, Mapping):
        return f"{name}-{_hex(rng, 6)}"
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return sample_value(schema[key][0], rng, name, required_only=required_only, depth=depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((t for t in kind if t != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "string":
        return _string(schema, rng, name)
    if kind == "integer":
        lo, hi = _bounds(schema, 0, 100, 1)
        low, high = math.ceil(lo), math.floor(hi)
        return rng.randint(low, high) if low <= high else low
    if kind == "number":
        lo, hi = _bounds(schema, 0.0, 1000.0, 1e-6)
        return round(rng.uniform(lo, hi), 4)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "array":
        if depth >= _MAX_DEPTH:
            return []
        low = schema.get("minItems", 1)
        n = max(low if isinstance(low, int) else 1, rng.randint(1, 3))
        high = schema.get("maxItems")
        n = min(n, high) if isinstance(high, int) else n
        return [sample_value(schema.get("items"), rng, name, required_only=required_only, depth=depth + 1)
                for _ in range(n)]
    # object
    if depth >= _MAX_DEPTH:
        return {}
    props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
    required = [r for r in schema.get("required") or () if isinstance(r, str)]
    keys = required if required_only else list(props) + [r for r in required if r not in props]
    return {k: sample_value(props.get(k), rng, k, required_only=required_only, depth=depth + 1) for k in keys}


def example_arguments(spec: ToolSpec, rng: random.Random) -> dict[str, Any]:
    """Arguments with exactly the tool's required parameters, each a schema-valid value."""
    value = sample_value(spec.parameters or {"type": "object"}, rng, "args", required_only=True)
    return value if isinstance(value, dict) else {}


def _hint_words(spec: ToolSpec) -> list[tuple[set[str], set[str]]]:
    """(words, yes/no hint words) to read, most telling first: the tool's own name (after the server
    prefix, e.g. "calc-server-is_prime" → {is, prime}), then the description's first sentence."""
    own = re.split(r"[-/.]", spec.name)[-1]
    first = re.split(r"(?<=[.!?])\s", spec.description.strip(), maxsplit=1)[0]
    words = [set(re.findall(r"[a-z]+", text.lower().replace("_", " "))) for text in (own, first)]
    return [(words[0], _NAME_BOOL_HINTS), (words[1], _BOOL_HINTS)]


def _topic(spec: ToolSpec, arguments: Mapping[str, Any]) -> str:
    for value in arguments.values():
        if isinstance(value, str) and value.strip():
            return value.strip()[:40]
    return re.split(r"[-/]", spec.name)[-1].replace("_", " ")


def hinted_result(spec: ToolSpec, arguments: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """A result shaped by words in the tool's name/description: a flag, a list, a number or a record."""
    for words, bool_hints in _hint_words(spec):
        if words & bool_hints:
            return {"value": rng.random() < 0.5}
        if words & _LIST_HINTS:
            topic = _topic(spec, arguments)
            n = rng.randint(1, 3)
            items = [{"id": _hex(rng), "title": f"{topic} #{k + 1}", "score": round(rng.uniform(0, 1), 3)}
                     for k in range(n)]
            return {"items": items, "total": n}
        if words & _NUMBER_HINTS:
            return {"value": round(rng.uniform(-1000, 1000), 4)}
    return {"id": _hex(rng), "message": f"{_topic(spec, arguments)}: done", "date": _date(rng).isoformat()}


def output_schema(spec: ToolSpec) -> Mapping[str, Any] | None:
    """The tool's declared output schema, when its definition carries one."""
    inner = spec.raw.get("function") if isinstance(spec.raw.get("function"), Mapping) else spec.raw
    for key in _OUTPUT_KEYS:
        value = inner.get(key)
        if isinstance(value, Mapping) and ("type" in value or "properties" in value):
            return value
    return None


def synthesise(spec: ToolSpec, arguments: Mapping[str, Any], seed: int) -> str:
    """The JSON text answering `spec(arguments)`: status, tool, the echoed input and a result."""
    rng = call_rng(seed, spec.name, arguments)
    declared = output_schema(spec)
    result = sample_value(declared, rng, "result") if declared else hinted_result(spec, arguments, rng)
    # The echo is canonical (sorted keys) so that key order never changes the text of a call.
    body = {"status": "success", "tool": spec.name, "input": json.loads(canonical_json(arguments)), "result": result}
    return json.dumps(body, ensure_ascii=False, default=str)
