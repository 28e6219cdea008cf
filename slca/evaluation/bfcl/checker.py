"""slca's own AST checker for BFCL's single-turn categories (docs/bfcl.md#matching-rules).

It follows BFCL's documented matching rules: a call matches a gold entry when the function name is
equal, every required parameter is given, every given parameter is in the schema and in the gold
entry, its value has the schema's type (an int is accepted for a float) and is one of the gold's
possible answers (strings compared after normalisation, lists in order, dicts key by key), and
every gold parameter left out is optional (its possible answers include ""). Parallel categories
match calls to gold entries in any order; irrelevance means no call, relevance at least one.
The functions here take decoded calls and never raise on any call content.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from slca.registry import Registry
from slca.toolcall.prompts import unwrap_tool
from slca.toolcall.types import ToolCall

# Error kinds. A kind names the first rule a call broke, in the order the rules are checked.
WRONG_COUNT = "wrong_count"
WRONG_NAME = "wrong_name"
MISSING_REQUIRED = "missing_required"
UNEXPECTED_PARAM = "unexpected_param"
TYPE_ERROR = "type_error"
VALUE_ERROR = "value_error"
MISSING_OPTIONAL = "missing_optional"
NO_MATCH = "no_match"  # parallel: no assignment of calls to gold entries matches them all
CALLED = "called_when_irrelevant"
NO_CALL = "no_call"
BAD_GOLD = "bad_gold"  # the gold names a function missing from the entry's list (data error)

# Schema type name → the Python type a value must have. BFCL's names and their JSON Schema twins
# (the converted tool schemas) both appear. "any" and unknown names put no constraint on the type.
SCHEMA_TYPES: dict[str, type] = {
    "string": str, "integer": int, "float": float, "number": float, "boolean": bool,
    "array": list, "tuple": list, "dict": dict, "object": dict,
}
OPTIONAL = ""  # a possible answer of "" marks a parameter that may be left out
# Characters BFCL's string normalisation removes (with lower-casing and ' → ").
_STRIP = re.compile(r"[ ,./\-_*^]")


def normalise(text: str) -> str:
    """A string as compared: without spaces and `,./-_*^`, lower-cased, single quotes as double."""
    return _STRIP.sub("", text).lower().replace("'", '"')


def _norm(value: Any) -> Any:
    return normalise(value) if type(value) is str else value


def _alternatives(allowed: Any) -> list[Any]:
    """A gold parameter's possible answers as a list (a bare value in hand-written gold is one answer)."""
    return list(allowed) if isinstance(allowed, list) else [allowed]


def _gold_type(allowed: Sequence[Any]) -> type | None:
    for a in allowed:
        if not (type(a) is str and a == OPTIONAL):
            return type(a)
    return None


def _fits(value: Any, expected: type | None) -> bool:
    """Whether `value` has the schema type (exact type, so a bool is no int; an int is a float)."""
    if expected is None:
        return True
    return type(value) is expected or (expected is float and type(value) is int)


def _dict_matches(value: Mapping[Any, Any], alt: Mapping[Any, Any]) -> bool:
    for key, v in value.items():
        if key not in alt or _norm(v) not in [_norm(a) for a in _alternatives(alt[key])]:
            return False
    return all(key in value or OPTIONAL in _alternatives(allowed) for key, allowed in alt.items())


def _list_matches(value: list[Any], alt: list[Any], item_type: type | None) -> bool:
    if len(value) != len(alt):
        return False
    if item_type is dict:
        return all(type(v) is dict and type(a) is dict and _dict_matches(v, a) for v, a in zip(value, alt))
    return [_norm(v) for v in value] == [_norm(a) for a in alt]


def check_value(value: Any, spec: Mapping[str, Any], allowed: Any) -> str | None:
    """None when `value` is acceptable for a parameter with schema `spec` and possible answers `allowed`."""
    allowed = _alternatives(allowed)
    expected = SCHEMA_TYPES.get(spec.get("type")) if isinstance(spec.get("type"), str) else None
    gold_type = _gold_type(allowed)
    if gold_type is not None and expected is not None and gold_type is not expected and not (
        expected is float and gold_type is int
    ):
        # The gold writes this parameter with another type than its schema (BFCL uses a string to
        # stand for a variable name): a value of either type is compared as written.
        if not (_fits(value, expected) or type(value) is gold_type):
            return TYPE_ERROR
        return None if value in allowed else VALUE_ERROR
    if not _fits(value, expected):
        return TYPE_ERROR
    if expected is list:
        items = spec.get("items") if isinstance(spec.get("items"), Mapping) else {}
        item_type = SCHEMA_TYPES.get(items.get("type")) if isinstance(items.get("type"), str) else None
        alts = [a for a in allowed if isinstance(a, list)]
        if OPTIONAL in allowed and value == []:
            return None  # an optional list given empty counts as left out (as in BFCL)
        # As at the top level, items written with the gold's own item type count as variables.
        item_types = [item_type] + [_gold_type(a) for a in alts if _gold_type(a) is not None]
        if not any(all(_fits(v, t) for v in value) for t in item_types):
            return TYPE_ERROR
        return None if any(_list_matches(value, a, item_type) for a in alts) else VALUE_ERROR
    if expected is dict:
        alts = [a for a in allowed if isinstance(a, dict)]
        return None if any(_dict_matches(value, a) for a in alts) else VALUE_ERROR
    if type(value) is str:
        # "" stays a target: an optional string given empty counts as left out (as in BFCL).
        targets = [normalise(a) for a in allowed if type(a) is str]
        return None if normalise(value) in targets else VALUE_ERROR
    return None if value in [a for a in allowed if not (type(a) is str and a == OPTIONAL)] else VALUE_ERROR


def schemas_by_name(functions: Sequence[Any]) -> dict[str, Mapping[str, Any]]:
    """Function schemas (BFCL's or OpenAI-style tools) by name."""
    out: dict[str, Mapping[str, Any]] = {}
    for f in functions:
        f = unwrap_tool(f)
        if isinstance(f, Mapping) and isinstance(f.get("name"), str):
            out.setdefault(f["name"], f)
    return out


def check_call(call: ToolCall, gold: Mapping[str, Any], schemas: Mapping[str, Mapping[str, Any]]) -> str | None:
    """None when `call` matches the gold entry {name: {param: possible answers}}; else the broken rule."""
    (gold_name, gold_params), = gold.items()
    if call.name != gold_name:
        return WRONG_NAME
    schema = schemas.get(gold_name)
    if schema is None:
        return BAD_GOLD
    params = schema.get("parameters") if isinstance(schema.get("parameters"), Mapping) else {}
    props = params.get("properties") if isinstance(params.get("properties"), Mapping) else {}
    args = call.arguments
    if any(r not in args for r in params.get("required") or ()):
        return MISSING_REQUIRED
    for key, value in args.items():
        if key not in props or key not in gold_params:
            return UNEXPECTED_PARAM
        spec = props[key] if isinstance(props[key], Mapping) else {}
        err = check_value(value, spec, gold_params[key])
        if err is not None:
            return err
    for key, allowed in gold_params.items():
        if key not in args and OPTIONAL not in _alternatives(allowed):
            return MISSING_OPTIONAL
    return None


# ----------------------------------------------------------------------------- per-category rules

CategoryCheck = Callable[[Sequence[ToolCall], Sequence[Mapping[str, Any]], Mapping[str, Mapping[str, Any]]], "str | None"]
CHECKS: Registry[CategoryCheck] = Registry("BFCL category check")


@CHECKS.register("single")
def _single(calls: Sequence[ToolCall], gold: Sequence[Mapping[str, Any]], schemas: Mapping[str, Mapping[str, Any]]) -> str | None:
    """simple and multiple: exactly one call, matching the one gold entry."""
    if not calls:
        return NO_CALL
    if len(calls) != len(gold) or len(gold) != 1:
        return WRONG_COUNT
    return check_call(calls[0], gold[0], schemas)


@CHECKS.register("parallel")
def _parallel(calls: Sequence[ToolCall], gold: Sequence[Mapping[str, Any]], schemas: Mapping[str, Mapping[str, Any]]) -> str | None:
    """parallel categories: as many calls as gold entries, matched one to one in any order."""
    if not calls:
        return NO_CALL
    if len(calls) != len(gold):
        return WRONG_COUNT
    fits = [[check_call(c, g, schemas) is None for c in calls] for g in gold]
    owner: list[int | None] = [None] * len(calls)  # call j → gold entry it is assigned to

    def assign(i: int, seen: set[int]) -> bool:
        # Kuhn's augmenting path: a greedy first-fit could miss a full matching that exists.
        for j, ok in enumerate(fits[i]):
            if ok and j not in seen:
                seen.add(j)
                if owner[j] is None or assign(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return None if all(assign(i, set()) for i in range(len(gold))) else NO_MATCH


@CHECKS.register("irrelevance")
def _irrelevance(calls: Sequence[ToolCall], gold: Sequence[Mapping[str, Any]], schemas: Mapping[str, Mapping[str, Any]]) -> str | None:
    """No function fits the question: any call is wrong."""
    return CALLED if calls else None


@CHECKS.register("relevance")
def _relevance(calls: Sequence[ToolCall], gold: Sequence[Mapping[str, Any]], schemas: Mapping[str, Mapping[str, Any]]) -> str | None:
    """Some function fits (no single right answer is given): at least one call."""
    return None if calls else NO_CALL
