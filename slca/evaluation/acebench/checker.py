"""ACEBench's matching rules for normal entries, as slca's own pure functions (docs/eval.md#table-3-acebench).

The rules are ACEBench's, quirks included, because its numbers are defined by them:
- the calls must name the gold functions as a multiset (a gold key's `_<digits>` suffix dropped);
  each gold call is then satisfied by any output call of its name that passes, so two gold calls
  of one function may be matched by the same output call;
- a call's schema is the first candidate function whose name occurs *inside* the gold key;
- every required parameter must be present, and every given one must be in both the schema and
  the gold; a gold parameter left out is not an error unless required;
- types are exact (bool is not int), "true"/"false" count as booleans, "number" means int, and a
  value whose type differs from the schema's but equals the gold's type passes with no further
  check (so a float where the schema says "number" is accepted at any value);
- strings compare after deleting spaces and , . / - _ * ^, lowercasing and making ' into ", and
  the gold only has to occur *inside* the output; lists must be equal element by element after
  that; dict values are compared as text, the gold's text inside the output's;
- integers and booleans at the top level are never compared with the gold.
Where ACEBench's own code would raise instead of deciding (a schema type it has no mapping for,
a gold list item that is not an object), these functions raise KeyError or TypeError too, and
slca.evaluation.acebench.check scores the output 0 with `checker:<exception>` as the reason.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any


class _NoValue:
    """The type ACEBench maps "enum" to (`enumerate`): no decoded value ever has it."""


TYPES: dict[str, type] = {
    "string": str, "integer": int, "float": float, "boolean": bool, "array": list, "tuple": list, "dict": dict,
    "any": str, "list": list, "object": dict, "objectArray": list, "list(string)": list, "list(enum)": list,
    "int": int, "enum": _NoValue, "number": int,
}
NESTED = ("array", "tuple", "list(string)", "list(enum)", "object", "objectArray")
_IGNORED = re.compile(r"[ ,./\-_*^]")
_SUFFIX = re.compile(r"_\d+$")

Call = tuple[str, Mapping[Any, Any]]


def standardize(text: str) -> str:
    """A string as ACEBench compares it."""
    return _IGNORED.sub("", text).lower().replace("'", '"')


def _as_bool(value: Any) -> Any:
    return {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value


def _gold_type(gold: Any) -> type | None:
    # "" marks an optional parameter: no type to compare with.
    return None if isinstance(gold, str) and gold == "" else type(gold)


def type_check(value: Any, gold: Any, expected: type, nested: type | None) -> tuple[bool, bool]:
    """(passes, is_variable): is_variable means the value is not compared with the gold afterwards."""
    gold_type = _gold_type(gold)
    variable = gold_type is not None and gold_type is not expected
    value = _as_bool(value)
    if type(value) is expected:
        if nested is None:
            return True, variable
        if not isinstance(gold, (list, tuple, dict, str)):
            raise TypeError("gold is not iterable")
        # Passes when some gold item is not a list, or every item of the value fits a gold list item.
        for item in gold:
            if type(item) is not list or all(type_check(v, item, nested, None)[0] for v in value):
                return True, variable
        return False, variable
    if gold_type is not None and (type(value) is gold_type or gold == value):
        return True, True
    return False, variable


def dict_check(value: Any, gold: Any) -> str | None:
    if not isinstance(value, dict):
        return "value_error:not_a_dict"
    if not isinstance(gold, Mapping):
        raise TypeError("gold item is not an object")
    if len(value) != len(gold):
        return "value_error:dict_keys"
    for key, item in value.items():
        item = _as_bool(item)
        if key not in gold:
            return "value_error:dict_keys"
        want = gold[key]
        if isinstance(want, dict):
            err = dict_check(item, want)
            if err is not None:
                return err
            continue
        have = standardize(item) if type(item) is str else item
        want = standardize(want) if type(want) is str else want
        if str(want) not in str(have):
            return "value_error:dict_value"
    return None


def _list_dict_check(value: list[Any], gold: Any) -> str | None:
    if len(value) != len(gold):
        return "value_error:list_dict_count"
    for have, want in zip(value, gold):
        err = dict_check(have, want)
        if err is not None:
            return err
    return None


def _std_items(items: Sequence[Any]) -> list[Any]:
    return [standardize(v) if type(v) is str else v for v in items]


def _value_check(value: Any, gold: Any, expected: type, nested: type | None, category: str) -> str | None:
    if expected is dict:
        return dict_check(value, gold)
    if expected is list and nested is dict:
        return _list_dict_check(value, gold)
    if expected is str:
        have, want = standardize(value), standardize(gold)
        ok = have == want if "agent" in category else want in have
        return None if ok else "value_error:string"
    if expected is list:
        return None if _std_items(value) == _std_items(gold) else "value_error:list"
    return None  # integers and booleans: ACEBench does not compare them


def _nested_type(schema: Mapping[str, Any], described: str) -> type:
    try:
        name = schema["items"]["type"]
    except (KeyError, TypeError, IndexError):
        name = "string" if "string" in described else "enum" if "enum" in described else "dict"
    if not isinstance(name, str) or name not in TYPES:
        raise KeyError(f"unknown item type {name!r}")
    return TYPES[name]


def call_check(function: Mapping[str, Any], name: str, args: Mapping[Any, Any], gold: Mapping[str, Any], category: str) -> str | None:
    """Why the output call `name(**args)` does not match the gold call's parameters `gold`
    (None when it does), `function` being the schema ACEBench picked for it."""
    schema = function["parameters"]
    if not args and not schema:
        return None
    if not args or not schema:
        return "wrong_param"
    properties = schema["properties"]
    if gold == properties:
        return None
    if not gold:
        return "wrong_param"
    if function["name"] != name:
        return "wrong_function_name"
    for param in schema["required"]:
        if param not in args:
            return "lack_args"
    for param, value in args.items():
        if param not in properties or param not in gold:
            return "addition_args"
        described = properties[param]["type"]
        if not isinstance(described, str) or described not in TYPES:
            raise KeyError(f"unknown type {described!r}")
        expected = TYPES[described]
        nested = _nested_type(properties[param], described) if described in NESTED else None
        if described == "tuple" and type(value) is tuple:
            value = list(value)
        if described == "float" and type(value) is int:
            value = float(value)
        ok, variable = type_check(value, gold[param], expected, nested)
        if not ok:
            return "type_error"
        if not variable:
            err = _value_check(value, gold[param], expected, nested, category)
            if err is not None:
                return err
    return None


def _schema_for(functions: Sequence[Mapping[str, Any]], gold_key: str) -> Mapping[str, Any]:
    for function in functions:
        if function["name"] in gold_key:
            return function
    raise KeyError(f"no candidate function for gold {gold_key!r}")


def _check(functions: Sequence[Mapping[str, Any]], calls: Sequence[Call], gold: Mapping[str, Any], category: str) -> str | None:
    if len(calls) != len(gold):
        return "wrong_count"
    wanted = [(_SUFFIX.sub("", key), key, params) for key, params in gold.items()]
    if Counter(name for name, _ in calls) != Counter(name for name, _, _ in wanted):
        return "function_mismatch"
    for name, key, params in wanted:
        schema = _schema_for(functions, key)
        errors = []
        for out_name, args in calls:
            if out_name == name:
                err = call_check(schema, out_name, args, params, category)
                if err is None:
                    break
                errors.append(err)
        else:
            return errors[0] if errors else "function_mismatch"
    return None


def normal_check(functions: Sequence[Mapping[str, Any]], calls: Sequence[Call], truth: Any, category: str) -> str | None:
    """Why `calls` do not answer a normal entry (None when they do): they must match one of the
    entry's possible answers (`truth`: one {function: {param: value}} or a list of them).

    Raises KeyError/TypeError where ACEBench's own checker would raise instead of deciding.
    """
    first = None
    for alternative in truth if isinstance(truth, list) else [truth]:
        err = _check(functions, calls, alternative, category)
        if err is None:
            return None
        first = first or err
    return first
