"""Model text → calls the way ACEBench reads a prompting model's output (docs/eval.md#table-3-acebench).

ACEBench deletes every whitespace character of the output, parses what is left as one Python
expression that must be a list (or tuple) of calls, and reads each call's keyword arguments: bare
names become their own text (`flag=true` is the string "true", which the checker then takes as a
boolean), positional arguments are ignored, a nested call becomes {name: {args}}, a subscript its
source text. Two of its readings evaluate model text (arithmetic and lambdas); slca never
evaluates model output, so those outputs are unreadable here. Thinking blocks are dropped first,
and a hermes `<tool_call>` block is read too (ACEBench's prompt never asks for one; the chat
template's tool format does), its strings stripped of whitespace like the text ACEBench reads.

An agent-category message is read as ACEBench's agent executor reads it (`decode_agent`): the
text kept as written (no whitespace deleted: message bodies are arguments), brackets added where
missing, then bracket and quote characters trimmed from both ends, and what is left parsed as one
call or a list of calls.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from slca.toolcall import parse_hermes, strip_thinking
from slca.toolcall.parse import OPEN_TAG

MAX_CHARS = 200_000
NOT_TEXT = "not_text"
TOO_LARGE = "too_large"
SYNTAX = "syntax_error"
NOT_A_LIST = "not_a_call_list"
NOT_A_CALL = "not_a_call"
EVALUATED = "needs_evaluation"  # arithmetic or a lambda: ACEBench runs eval on it, slca refuses
UNSUPPORTED = "unsupported_value"


@dataclass(frozen=True)
class Decoded:
    """The calls read from one output, each (name, arguments), or why none could be read."""

    calls: tuple[tuple[str, dict[Any, Any]], ...] = ()
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class _Unreadable(Exception):
    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def _dotted(node: ast.AST) -> str:
    # Attribute parts innermost-last, then the base name when it is one (anything else is left out).
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _call(node: ast.Call) -> tuple[str, dict[Any, Any]]:
    return _dotted(node.func), {kw.arg: _value(kw.value) for kw in node.keywords}


def _value(node: ast.AST | None) -> Any:
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        # ACEBench negates the operand whatever the operator (`+5` reads -5).
        if isinstance(node.operand, ast.Constant):
            try:
                return -node.operand.value
            except TypeError:
                raise _Unreadable(UNSUPPORTED) from None
        raise _Unreadable(UNSUPPORTED)
    if isinstance(node, ast.List):
        return [_value(v) for v in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_value(v) for v in node.elts)
    if isinstance(node, ast.Dict):
        try:
            return {_value(k): _value(v) for k, v in zip(node.keys, node.values)}
        except TypeError:  # an unhashable key
            raise _Unreadable(UNSUPPORTED) from None
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        name, args = _call(node)
        return {name: args}
    if isinstance(node, ast.Subscript):
        return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"
    if isinstance(node, (ast.BinOp, ast.Lambda)):
        raise _Unreadable(EVALUATED)
    raise _Unreadable(UNSUPPORTED)


def _squeeze(value: Any) -> Any:
    """`value` with the whitespace deleted from every string, keys included (what ACEBench's deletion does)."""
    if isinstance(value, str):
        return "".join(value.split())
    if isinstance(value, dict):
        return {_squeeze(k): _squeeze(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_squeeze(v) for v in value]
    return value


def _body(text: object) -> str | Decoded:
    """The output with thinking blocks dropped, or why it is not read at all."""
    if not isinstance(text, str):
        return Decoded(error=NOT_TEXT)
    if len(text) > MAX_CHARS:
        return Decoded(error=TOO_LARGE)
    return strip_thinking(text)


def _calls(elts: list[ast.expr]) -> Decoded:
    try:
        calls = []
        for elem in elts:
            if not isinstance(elem, ast.Call):
                return Decoded(error=NOT_A_CALL)
            calls.append(_call(elem))
    except _Unreadable as exc:
        return Decoded(error=exc.kind)
    except RecursionError:
        return Decoded(error=UNSUPPORTED)
    return Decoded(tuple(calls))


def decode(text: object) -> Decoded:
    """The calls in one model output, read as ACEBench reads them. Never raises."""
    body = _body(text)
    if isinstance(body, Decoded):
        return body
    if OPEN_TAG in body:
        res = parse_hermes(body)
        err = res.error or res.first_error or (None if res.blocks else "unclosed_tool_call")
        if err is not None:
            return Decoded(error=err)
        return Decoded(tuple((_squeeze(c.name), _squeeze(c.arguments)) for c in res.calls))
    try:
        tree = ast.parse("".join(body.split()), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Decoded(error=SYNTAX)
    if not isinstance(tree, (ast.List, ast.Tuple, ast.Set)):
        return Decoded(error=NOT_A_LIST)
    return _calls(tree.elts)


def decode_agent(text: object) -> Decoded:
    """The calls in one agent-category message, read as ACEBench's agent executor reads them. Never raises."""
    body = _body(text)
    if isinstance(body, Decoded):
        return body
    body = body[1:] if body.startswith(" ") else body
    body = ("" if body.startswith("[") else "[") + body + ("" if body.endswith("]") else "]")
    try:
        tree = ast.parse(body.strip("[]'"), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Decoded(error=SYNTAX)
    if isinstance(tree, ast.Call):
        return _calls([tree])
    if isinstance(tree, (ast.List, ast.Tuple)):
        return _calls(tree.elts)
    return Decoded(error=NOT_A_LIST)
