"""Model text → calls for the multi-turn executor, reading and never running (docs/bfcl.md#the-safe-executor).

Two forms are read: hermes `<tool_call>` JSON blocks (what the chat template asks for) and BFCL's
pythonic list `[f(a=1), g('x')]` (what the `bfcl_default` prompt asks for), parsed with `ast`. A
call must name a bare public function (`f`, never `a.f`, `_f` or `__f__`); each argument must be a
literal that `ast.literal_eval` accepts (positional arguments allowed, as BFCL's own gold uses
them; no `*args`/`**kwargs`). Operators, names, lambdas, comprehensions and nested calls are refused
before anything is evaluated, so `2**10**10` is an unreadable output, not a computation.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass
from typing import Any

from slca.toolcall import parse_hermes, strip_thinking
from slca.toolcall.parse import OPEN_TAG

MAX_CHARS = 200_000  # longer output is refused unread (a turn's generation budget is far below it)


@dataclass(frozen=True)
class Call:
    """One call to dispatch: a bare function name, positional and keyword literal arguments."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()

    def source(self) -> str:
        """The call written back as Python source (literals through repr)."""
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs]
        return f"{self.name}({', '.join(parts)})"


@dataclass(frozen=True)
class Parsed:
    """The calls read from one output (empty: it made none), or why it could not be read."""

    calls: tuple[Call, ...]
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class _Refused(Exception):
    pass


def _public_name(name: object) -> str:
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
        raise _Refused("bad_name")
    return name


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise _Refused("not_a_literal") from None


def _call(node: ast.AST) -> Call:
    if not isinstance(node, ast.Call):
        raise _Refused("not_a_call")
    if not isinstance(node.func, ast.Name):  # attribute access, subscripts, calls returning callables
        raise _Refused("bad_name")
    name = _public_name(node.func.id)
    args = []
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            raise _Refused("not_a_literal")
        args.append(_literal(arg))
    kwargs: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None or kw.arg in kwargs:
            raise _Refused("not_a_literal")
        kwargs[kw.arg] = _literal(kw.value)
    return Call(name, tuple(args), tuple(kwargs.items()))


def _strip_fence(text: str) -> str:
    if text.startswith("```") and text.endswith("```") and len(text) >= 6:
        body = text[3:-3]
        first_nl = body.find("\n")
        if first_nl >= 0 and body[:first_nl].strip().isidentifier():
            body = body[first_nl + 1:]
        return body.strip()
    return text


def parse_source(text: str) -> Parsed:
    """BFCL's pythonic form: one call or a list/tuple of calls, optionally in a code fence."""
    raw = _strip_fence(text.strip())
    if not raw:
        return Parsed(())
    try:
        with warnings.catch_warnings():  # e.g. "invalid decimal literal": the model's text is not ours to warn about
            warnings.simplefilter("ignore")
            tree = ast.parse(raw, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return Parsed((), "syntax_error")
    nodes = tree.elts if isinstance(tree, (ast.List, ast.Tuple)) else [tree]
    try:
        return Parsed(tuple(_call(n) for n in nodes))
    except _Refused as exc:
        return Parsed((), str(exc))
    except RecursionError:
        return Parsed((), "too_deep")


def _hermes(text: str) -> Parsed:
    res = parse_hermes(text, max_chars=MAX_CHARS)
    err = res.error or res.first_error
    if err is not None:
        return Parsed((), str(err))
    if not res.blocks:
        return Parsed((), "unclosed_tool_call")
    try:
        return Parsed(tuple(Call(_public_name(c.name), (), tuple(c.arguments.items())) for c in res.calls))
    except _Refused as exc:
        return Parsed((), str(exc))


def decode(text: object) -> Parsed:
    """Every call of one assistant step; thinking is dropped first. Never raises, never evaluates."""
    if not isinstance(text, str):
        return Parsed((), "not_text")
    if len(text) > MAX_CHARS:
        return Parsed((), "too_large")
    body = strip_thinking(text)
    return _hermes(body) if OPEN_TAG in body else parse_source(body)
