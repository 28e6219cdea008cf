"""A BFCL gold answer as the text a model would write (docs/bfcl.md#checking-the-checker).

The first possible answer of every parameter is taken and a parameter whose first possible answer
is "" (optional) is left out, recursively inside dict values. Used to replay the gold through
the whole pipeline (a scripted endpoint answering with it) and to check the checker.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from slca.toolcall.types import ToolCall

OPTIONAL = ""


def _first(allowed: Any) -> tuple[bool, Any]:
    """(present, value): the first possible answer, or (False, None) when it is the optional marker."""
    alts = allowed if isinstance(allowed, list) else [allowed]
    if not alts or (type(alts[0]) is str and alts[0] == OPTIONAL):
        return False, None
    return True, _concrete(alts[0])


def _concrete(value: Any) -> Any:
    # Inside a dict answer each key again holds a list of possible answers.
    if isinstance(value, dict):
        out = {}
        for k, allowed in value.items():
            present, v = _first(allowed)
            if present:
                out[k] = v
        return out
    if isinstance(value, list):
        return [_concrete(v) if isinstance(v, dict) else v for v in value]
    return value


def gold_calls(possible_answer: Sequence[Mapping[str, Any]] | None) -> list[ToolCall]:
    """One call per gold entry, in the gold's order."""
    calls = []
    for entry in possible_answer or ():
        (name, params), = entry.items()
        args = {}
        for key, allowed in params.items():
            present, value = _first(allowed)
            if present:
                args[key] = value
        calls.append(ToolCall(name, args))
    return calls


def render_pythonic(calls: Sequence[ToolCall]) -> str:
    """`[f(a=1), g(b='x')]`, BFCL's prompting format (values as Python literals)."""
    return "[" + ", ".join(f"{c.name}(" + ", ".join(f"{k}={v!r}" for k, v in c.arguments.items()) + ")" for c in calls) + "]"


def render_hermes(calls: Sequence[ToolCall]) -> str:
    """One `<tool_call>` block holding a JSON list of {name, arguments} (slca's chat-template format)."""
    body = json.dumps([{"name": c.name, "arguments": c.arguments} for c in calls], ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call>"



NO_CALL_ANSWER = "None of the given functions can answer this question."

# Checker rule → a correct output for an entry it checks (functions, possible answers) → text.
_REFERENCE: dict[str, Callable[[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]] | None], str]] = {
    "single": lambda functions, gold: render_pythonic(gold_calls(gold)),
    "parallel": lambda functions, gold: render_pythonic(gold_calls(gold)),
    "irrelevance": lambda functions, gold: NO_CALL_ANSWER,  # no call wanted
    # Any call will do: the first function, arguments left out.
    "relevance": lambda functions, gold: render_pythonic([ToolCall(str(functions[0]["name"]), {})]) if functions else NO_CALL_ANSWER,
}


def reference_answer(functions: Sequence[Mapping[str, Any]], possible_answer: Sequence[Mapping[str, Any]] | None,
                     rule: str) -> str:
    """A correct output for an entry checked by `rule` (slca.evaluation.bfcl.checker.CHECKS)."""
    return _REFERENCE[rule](functions, possible_answer)
