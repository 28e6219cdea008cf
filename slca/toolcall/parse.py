"""Tool-call parsers: hermes `<tool_call>` JSON blocks and BFCL-style pythonic call lists.

Behaviour follows docs/method.md#format-check (block validity) without the allowed-tools check, which belongs to
the reward. Parsers never raise on model output: every failure becomes an error kind.
Scanning uses `str.find` loops instead of non-greedy regexes so that unclosed tags cost linear,
not quadratic, time.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from slca.toolcall.types import Block, ParseResult, ToolCall

OPEN_TAG = "<tool_call>"
CLOSE_TAG = "</tool_call>"
RESPONSE_TAG = "<tool_response>"  # the environment's answer: what separates one assistant turn's calls from the next's
_THINK_TAGS = (("<think>", "</think>"), ("<thinking>", "</thinking>"))

# Error kinds (block-level unless noted).
EMPTY = "empty"
JSON_ERROR = "json_error"
SYNTAX_ERROR = "syntax_error"
NOT_CALL = "not_call"
MISSING_NAME = "missing_name"
BAD_NAME = "bad_name"
BAD_ARGUMENTS = "bad_arguments"
POSITIONAL_ARGS = "positional_args"
TOO_LARGE = "too_large"  # whole input over max_chars
TOO_DEEP = "too_deep"
NOT_TEXT = "not_text"  # whole input is not a str
ERROR_KINDS: tuple[str, ...] = (
    EMPTY, JSON_ERROR, SYNTAX_ERROR, NOT_CALL, MISSING_NAME, BAD_NAME, BAD_ARGUMENTS, POSITIONAL_ARGS,
    TOO_LARGE, TOO_DEEP, NOT_TEXT,
)

# String literals are removed before the bracket-depth scan so brackets inside them do not count.
# Possessive quantifiers keep these linear on pathological input.
_JSON_STR = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_PY_STR = re.compile(r'"(?:[^"\\]++|\\.)*+"|\'(?:[^\'\\]++|\\.)*+\'', re.DOTALL)
# Everything except brackets, removed before the (rare) exact depth scan.
_NOT_JSON_BRACKET = re.compile(r"[^\[\]{}]++")
_NOT_PY_BRACKET = re.compile(r"[^\[\](){}]++")
_DECODER = json.JSONDecoder()


def strip_thinking(text: str) -> str:
    """Remove every `<think>…</think>` and `<thinking>…</thinking>` block.

    Same result as the non-greedy DOTALL regex of docs/method.md#format-check (leftmost closable opening tag wins;
    an opening tag with no later closing tag is left as is), in linear time.
    """
    if "<think" not in text:
        return text
    pieces: list[str] = []
    pos = 0
    # Per tag kind: cached (start, end) of the next closable block at or after `pos`, or None
    # once no closable block of that kind remains.
    cache: list[tuple[int, int] | None] = [(-1, -1), (-1, -1)]
    while True:
        best: tuple[int, int] | None = None
        for k, (open_t, close_t) in enumerate(_THINK_TAGS):
            cand = cache[k]
            if cand is not None and cand[0] < pos:
                s = text.find(open_t, pos)
                e = text.find(close_t, s + len(open_t)) if s >= 0 else -1
                cand = (s, e + len(close_t)) if e >= 0 else None
                cache[k] = cand
            if cand is not None and (best is None or cand[0] < best[0]):
                best = cand
        if best is None:
            break
        pieces.append(text[pos : best[0]])
        pos = best[1]
    pieces.append(text[pos:])
    return "".join(pieces)


def _too_deep(text: str, max_depth: int, string_re: re.Pattern[str]) -> bool:
    """True when brackets outside string literals nest deeper than `max_depth` (cheap pre-check)."""
    python = string_re is _PY_STR
    n_open = text.count("[") + text.count("{") + (text.count("(") if python else 0)
    if n_open <= max_depth:
        return False
    brackets = (_NOT_PY_BRACKET if python else _NOT_JSON_BRACKET).sub("", string_re.sub("", text))
    depth = 0
    for ch in brackets:
        if ch in "[{(":
            depth += 1
            if depth > max_depth:
                return True
        else:
            depth -= 1
    return False


def _decode_json(text: str, max_depth: int) -> tuple[Any, str | None]:
    if _too_deep(text, max_depth, _JSON_STR):
        return None, TOO_DEEP
    try:
        # raw_decode skips json.loads' wrapper; trailing text is an error as with json.loads.
        text = text.strip()
        obj, end = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):
        return None, JSON_ERROR
    return (obj, None) if end == len(text) else (None, JSON_ERROR)


def _json_call(obj: Any, max_depth: int, string_arguments: bool) -> tuple[ToolCall | None, str | None]:
    if not isinstance(obj, dict):
        return None, NOT_CALL
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return None, MISSING_NAME
    args = obj.get("arguments") or obj.get("parameters") or {}
    if isinstance(args, str) and string_arguments:
        # Some models double-encode arguments; accept a JSON string that decodes to an object.
        args, err = _decode_json(args, max_depth)
        if err == TOO_DEEP:
            return None, TOO_DEEP
    if not isinstance(args, dict):
        return None, BAD_ARGUMENTS
    return ToolCall(name, args), None


def _hermes_block(raw: str, max_depth: int, string_arguments: bool, step: int) -> Block:
    if not raw:
        return Block(raw, None, EMPTY, step)
    obj, err = _decode_json(raw, max_depth)
    if err is not None:
        return Block(raw, None, err, step)
    items = [obj] if isinstance(obj, dict) else obj
    if not isinstance(items, list):
        return Block(raw, None, NOT_CALL, step)
    calls = []
    for item in items:
        call, err = _json_call(item, max_depth, string_arguments)
        if call is None:
            return Block(raw, None, err, step)
        calls.append(call)
    return Block(raw, tuple(calls), None, step)


def parse_hermes(
    text: str, *, max_chars: int = 200_000, max_depth: int = 32, string_arguments: bool = True
) -> ParseResult:
    """Parse hermes `<tool_call>{json}</tool_call>` blocks (docs/method.md#format-check, minus allowed tools).

    Thinking is stripped first; each non-overlapping open…first-close pair is one block. A block
    holds a JSON object (one call) or a JSON list of objects (parallel calls); the blocks between two
    `<tool_response>` tags are one step (Block.step), so a turn may also write one block per call. Arguments are the
    first truthy of `arguments`/`parameters`, else {}. string_arguments: also accept a JSON string
    that decodes to an object (the reference rejects it: pass False for bit-faithful scoring).
    Input over `max_chars` returns no blocks, zero counts and `error="too_large"`.
    """
    if not isinstance(text, str):
        return ParseResult((), 0, 0, NOT_TEXT)
    if len(text) > max_chars:
        return ParseResult((), 0, 0, TOO_LARGE)
    text = strip_thinking(text)
    n_open = text.count(OPEN_TAG)
    n_close = text.count(CLOSE_TAG)
    blocks: list[Block] = []
    if n_open and n_close:
        pos = step = 0
        while True:
            s = text.find(OPEN_TAG, pos)
            if s < 0:
                break
            e = text.find(CLOSE_TAG, s + len(OPEN_TAG))
            if e < 0:
                break
            step += text.count(RESPONSE_TAG, pos, s)
            blocks.append(_hermes_block(text[s + len(OPEN_TAG) : e].strip(), max_depth, string_arguments, step))
            pos = e + len(CLOSE_TAG)
    return ParseResult(tuple(blocks), n_open, n_close, None)


# ----------------------------------------------------------------------------- pythonic


class _Reject(Exception):
    """Internal: carries an error kind out of the AST walk."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def _literal(node: ast.AST, depth: int, max_depth: int) -> Any:
    """Convert a literal AST node to a JSON-like value; anything else (names, calls, ops) rejects."""
    if depth > max_depth:
        raise _Reject(TOO_DEEP)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (str, int, float, bool)) or node.value is None:
            return node.value
        raise _Reject(BAD_ARGUMENTS)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = node.operand
        if isinstance(operand, ast.Constant) and type(operand.value) in (int, float):
            return -operand.value if isinstance(node.op, ast.USub) else operand.value
        raise _Reject(BAD_ARGUMENTS)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e, depth + 1, max_depth) for e in node.elts]
    if isinstance(node, ast.Dict):
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values):
            if k is None:  # `**spread`
                raise _Reject(BAD_ARGUMENTS)
            key = _literal(k, depth + 1, max_depth)
            if isinstance(key, (list, dict)):  # unhashable, and no JSON object key
                raise _Reject(BAD_ARGUMENTS)
            out[key] = _literal(v, depth + 1, max_depth)
        return out
    raise _Reject(BAD_ARGUMENTS)


def _dotted_name(node: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise _Reject(BAD_NAME)
    parts.append(node.id)
    return ".".join(reversed(parts))


def _py_call(node: ast.AST, max_depth: int) -> ToolCall:
    if not isinstance(node, ast.Call):
        raise _Reject(NOT_CALL)
    name = _dotted_name(node.func)
    if node.args:
        raise _Reject(POSITIONAL_ARGS)
    args: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None or kw.arg in args:  # `**kwargs` or a repeated keyword (Python rejects it)
            raise _Reject(BAD_ARGUMENTS)
        args[kw.arg] = _literal(kw.value, 2, max_depth)
    return ToolCall(name, args)


def _strip_fence(text: str) -> str:
    """Drop one surrounding Markdown code fence (``` or ```python), which models often add."""
    if text.startswith("```") and text.endswith("```") and len(text) >= 6:
        body = text[3:-3]
        first_nl = body.find("\n")
        if first_nl >= 0 and body[:first_nl].strip().isidentifier():
            body = body[first_nl + 1 :]
        return body.strip()
    return text


def parse_pythonic(text: str, *, max_chars: int = 200_000, max_depth: int = 32) -> ParseResult:
    """Parse a BFCL-style call list `[f(a=1), mod.g(x='y')]` (or one bare call) with `ast` only.

    Nothing is evaluated: arguments must be keyword literals (str/number/bool/None, lists,
    tuples→lists, dicts); names, nested calls, operators and positional arguments are errors.
    The whole text is one block (counts 1/1); empty text or `[]` means no call (no blocks, 0/0).
    """
    if not isinstance(text, str):
        return ParseResult((), 0, 0, NOT_TEXT)
    if len(text) > max_chars:
        return ParseResult((), 0, 0, TOO_LARGE)
    raw = _strip_fence(strip_thinking(text).strip())
    if not raw:
        return ParseResult((), 0, 0, None)
    if _too_deep(raw, max_depth, _PY_STR):
        return ParseResult((Block(raw, None, TOO_DEEP),), 1, 1, None)
    try:
        tree = ast.parse(raw, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # MemoryError/RecursionError are how CPython's parser reports overly nested input.
        return ParseResult((Block(raw, None, SYNTAX_ERROR),), 1, 1, None)
    nodes = tree.elts if isinstance(tree, (ast.List, ast.Tuple)) else [tree]
    if not nodes:
        return ParseResult((), 0, 0, None)
    try:
        calls = tuple(_py_call(n, max_depth) for n in nodes)
    except _Reject as rej:
        return ParseResult((Block(raw, None, rej.kind),), 1, 1, None)
    except RecursionError:
        return ParseResult((Block(raw, None, TOO_DEEP),), 1, 1, None)
    return ParseResult((Block(raw, calls, None),), 1, 1, None)
