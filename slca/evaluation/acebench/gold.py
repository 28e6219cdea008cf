"""An ACEBench ground truth as the text a model following ACEBench's prompt would write, and the
perturbations of it the checker is checked with (docs/eval.md#checking-the-checker-against-acebench).

Normal entries: the first possible answer as `[Func(key='value', ...)]`, values as Python literals
(a gold key's `_<digits>` suffix dropped). Special entries: the sentence ACEBench's special prompt
asks for, the gold names and values joined by "," exactly as the gold writes them (ACEBench matches
them as substrings, stray spaces included).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from slca.evaluation.acebench.data import SPECIAL, Entry

Call = tuple[str, dict[str, Any]]
WRONG = "qqq_wrong_qqq"


def gold_calls(truth: Any) -> list[Call]:
    """The calls of the first possible answer, in the gold's order."""
    first = truth[0] if isinstance(truth, list) else truth
    return [(re.sub(r"_\d+$", "", name), copy.deepcopy(dict(params))) for name, params in first.items()]


def render(calls: list[Call]) -> str:
    """`[f(a=1), g(b='x')]`, ACEBench's requested format."""
    return "[" + ", ".join(f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")" for name, args in calls) + "]"


def reference_answer(entry: Entry) -> str:
    """A correct output for `entry` under ACEBench's rules."""
    if entry.category == "special_irrelevant":
        return '["Due to the limitations of the function, I cannot solve this problem."]'
    if entry.category == "special_incomplete":
        (name, values), *_ = entry.truth.items()
        return f'["Missing necessary parameters ({",".join(values)}) for the api ({name})"]'
    if entry.category == "special_error_param":
        return "[" + ", ".join(f'"There is incorrect value ({",".join(v)}) for the parameters ({k}) in the conversation history."'
                               for k, v in entry.truth.items()) + "]"
    return render(gold_calls(entry.truth))


def _other_type(value: Any) -> Any:
    """A value of another JSON type than `value` ("true"/"false" avoided: ACEBench reads them as booleans)."""
    if isinstance(value, str):
        return 7
    if isinstance(value, (bool, int, float)):
        return "seven"
    return "seven" if isinstance(value, (list, dict)) else 7


def _other_value(value: Any) -> Any:
    """A value of the same type as `value` that differs from it."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return WRONG
    if isinstance(value, list):
        return [*value, WRONG] if value else [WRONG]
    if isinstance(value, dict) and value:
        key = next(iter(value))
        return {**value, key: _other_value(value[key])}
    return WRONG


def _first_arg(calls: list[Call]) -> tuple[int, str] | None:
    for i, (_, args) in enumerate(calls):
        if args:
            return i, next(iter(args))
    return None


def _last_arg(calls: list[Call]) -> tuple[int, str] | None:
    for i in reversed(range(len(calls))):
        if calls[i][1]:
            return i, list(calls[i][1])[-1]
    return None


def _with_arg(calls: list[Call], change: Callable[[dict[str, Any], str], None], pick=_first_arg) -> list[Call] | None:
    where = pick(calls)
    if where is None:
        return None
    out = copy.deepcopy(calls)
    change(out[where[0]][1], where[1])
    return out


def _normal_perturbations(calls: list[Call]) -> dict[str, list[Call] | None]:
    return {
        "drop_argument": _with_arg(calls, lambda args, key: args.pop(key)),
        "wrong_type": _with_arg(calls, lambda args, key: args.__setitem__(key, _other_type(args[key]))),
        "wrong_value": _with_arg(calls, lambda args, key: args.__setitem__(key, _other_value(args[key]))),
        "wrong_value_last": _with_arg(calls, lambda args, key: args.__setitem__(key, _other_value(args[key])), _last_arg),
        "reordered": list(reversed(calls)) if len(calls) > 1 and calls[0] != calls[-1] else None,
        "extra_call": [*calls, copy.deepcopy(calls[0])],
    }


def _special_perturbations(entry: Entry) -> dict[str, str | None]:
    gold = reference_answer(entry)
    if entry.category == "special_irrelevant":
        return {"wrong_value": '["I cannot help with this request."]', "extra_call": None}
    (name, values), *_ = entry.truth.items()
    dropped = gold.replace(values[0], "", 1) if len(values) > 1 and values[0].strip() else None
    return {
        "drop_argument": dropped,
        "wrong_value": gold.replace(name, WRONG) if entry.category == "special_incomplete" else gold.replace(values[0], WRONG),
    }


def perturbations(entry: Entry) -> dict[str, str]:
    """The gold answer and each perturbation of it that applies to `entry`, as output texts."""
    out = {"gold": reference_answer(entry)}
    if entry.category in SPECIAL:
        variants = _special_perturbations(entry)
        for kind, text in variants.items():
            if text is not None:
                out[kind] = text
        # A call where ACEBench wants the problem pointed out.
        out["call_instead"] = render([(entry.functions[0]["name"], {})])
        return out
    for kind, calls in _normal_perturbations(gold_calls(entry.truth)).items():
        if calls is not None:
            out[kind] = render(calls)
    # JSON's spelling of booleans, which ACEBench reads as bare names (text), then as booleans where a
    # boolean is wanted.
    json_bools = re.sub(r"([=\[]|: |, )(True|False)\b", lambda m: m.group(1) + m.group(2).lower(), out["gold"])
    if json_bools != out["gold"]:
        out["json_booleans"] = json_bools
    return out
