"""Hermes markup as it appears in stored data: the `<tools>` block of a system turn, `<tool_call>`
blocks in assistant turns and `<tool_response>` blocks in user turns (docs/method.md#rl-rows, docs/method.md#sft-materialisation).

Data-side helpers only: they read and write training rows, they do not score model output
(that is `slca.toolcall`). Stdlib only.
"""

from __future__ import annotations

import ast
import functools
import json
from typing import Any

from slca.data import fastjson, guard

CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
RESP_OPEN, RESP_CLOSE = "<tool_response>", "</tool_response>"
TOOLS_OPEN, TOOLS_CLOSE = "<tools>", "</tools>"

# Qwen2.5's default hermes tool block, as in the reference RL preview's system prompt (docs/method.md#rl-rows).
_HERMES_HEAD = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
)
_HERMES_TAIL = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)
REFERENCE_SYSTEM_PREFIX = "You have access to the following tools:\n\n\n\n"
REFERENCE_SYSTEM_SUFFIX = "\n\nUse them when appropriate to help answer the user's questions."


class MarkupError(ValueError):
    """Malformed hermes markup; the message is the reason reported for the row."""


def _unbalanced(text: str, open_tag: str, close_tag: str) -> MarkupError:
    n_open, n_close = text.count(open_tag), text.count(close_tag)
    if n_open != n_close:
        return MarkupError(f"unbalanced {open_tag} tags ({n_open} open, {n_close} close)")
    return MarkupError(f"unbalanced {open_tag} tags (nested, unclosed or closed before opened)")


def split_blocks(text: str, open_tag: str, close_tag: str) -> tuple[list[str], str]:
    """(inner texts of every `open…close` block in order, the text outside them concatenated).

    Raises MarkupError unless the tags are balanced: equal counts, no nesting, every close
    preceded by its open. Uses str.split so the cost stays linear and in C.
    """
    if open_tag not in text:
        if close_tag in text:
            raise _unbalanced(text, open_tag, close_tag)
        return [], text
    parts = text.split(open_tag)
    if close_tag in parts[0]:
        raise _unbalanced(text, open_tag, close_tag)
    inners: list[str] = []
    outs = [parts[0]]
    for part in parts[1:]:
        pieces = part.split(close_tag)
        if len(pieces) != 2:
            raise _unbalanced(text, open_tag, close_tag)
        inners.append(pieces[0])
        outs.append(pieces[1])
    return inners, "".join(outs)


def blocks(text: str, open_tag: str, close_tag: str) -> list[str]:
    """Inner texts of every `open…close` block, in order; raises MarkupError when tags are unbalanced."""
    return split_blocks(text, open_tag, close_tag)[0]


def outside(text: str, open_tag: str, close_tag: str) -> str:
    """The text with every `open…close` block removed (tags must be balanced), stripped."""
    return split_blocks(text, open_tag, close_tag)[1].strip()


def _call(obj: Any) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise MarkupError(f"tool call must be an object, got {type(obj).__name__}")
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        raise MarkupError("tool call has no string `name`")
    args = obj["arguments"] if "arguments" in obj else obj.get("parameters")
    if isinstance(args, str):  # some sources store arguments as a JSON string
        text = args
        try:
            args = fastjson.loads(text) if text.strip() else {}
        except fastjson.NonFiniteNumber as exc:
            raise MarkupError(f"arguments of {name!r}{' at ' + exc.path if exc.path else ''}: {exc.reason}") from None
        except json.JSONDecodeError as exc:
            raise MarkupError(f"arguments of {name!r} are a string that is not JSON: {exc.msg}") from None
        bad = guard.decoded_problem(text, args)
        if bad is not None:
            raise MarkupError(f"arguments of {name!r}: {bad[1]}")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise MarkupError(f"arguments of {name!r} must be an object, got {type(args).__name__}")
    return {"name": name, "arguments": args}


def _json_or_literal(text: str, what: str) -> Any:
    """`text` as JSON, else as a Python literal (`ast.literal_eval`, never `eval`; real Toucan rows
    hold both), refused when the guard finds it too deep or not representable as JSON; a refusal is a
    MarkupError naming `what`."""
    try:
        value = fastjson.loads(text)
        bad = guard.decoded_problem(text, value)
    except fastjson.NonFiniteNumber as exc:  # JSON, but holding NaN/Infinity: no literal reading helps
        bad = (exc.path, exc.reason)
    except json.JSONDecodeError as exc:
        try:
            value = _literal(text)
        except ValueError:
            raise MarkupError(f"{what} is neither JSON nor a Python literal: {exc.msg} at char {exc.pos}") from None
        bad = guard.problem(value, json_only=True)
    if bad is not None:
        raise MarkupError(f"{what}{' at ' + bad[0] if bad[0] else ''}: {bad[1]}")
    return value


def _literal(text: str) -> Any:
    """A Python literal (never evaluated as code), or ValueError."""
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise ValueError(str(exc)) from None


def parse_call_block(inner: str) -> list[dict[str, Any]]:
    """One `<tool_call>` block body → its calls [{name, arguments}] (object or list of objects).

    The body is JSON or a Python literal: real Toucan rows hold both (docs/method.md#sft-materialisation).
    Literals go through ast.literal_eval only and must be JSON-representable.
    """
    body = inner.strip()
    if not body:
        raise MarkupError("empty <tool_call> block")
    value = _json_or_literal(body, "<tool_call> body")
    items = value if isinstance(value, (list, tuple)) else [value]
    if not items:
        raise MarkupError("empty call list in <tool_call>")
    return [_call(x) for x in items]


def parse_calls(text: str) -> list[list[dict[str, Any]]]:
    """All `<tool_call>` blocks of an assistant turn → one list of calls per block."""
    return [parse_call_block(b) for b in blocks(text, CALL_OPEN, CALL_CLOSE)]


def parse_responses(text: str) -> list[str]:
    """Stripped bodies of every `<tool_response>` block of a user turn."""
    return [b.strip() for b in blocks(text, RESP_OPEN, RESP_CLOSE)]


def _tool_from_value(value: Any) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value]
    for t in items:
        if not isinstance(t, dict):
            raise MarkupError(f"tool entry must be an object, got {type(t).__name__}")
    return items


def parse_tools_text(body: str) -> list[dict[str, Any]]:
    """The body of a `<tools>` block: one JSON value (list or object) or NDJSON (JSON or Python literal per line)."""
    return parse_tools_json(body)[0]


def _tools_from_whole(body: str) -> tuple[list[dict[str, Any]], str] | None:
    """`body` read as one JSON value (an object or a list of tools), or None when it is not JSON."""
    try:
        tools = _tool_from_value(fastjson.loads(body))
    except fastjson.NonFiniteNumber as exc:
        raise MarkupError(f"<tools> block{' at ' + exc.path if exc.path else ''}: {exc.reason}") from None
    except json.JSONDecodeError:
        return None
    return tools, json.dumps(tools, ensure_ascii=False)


def parse_tools_json(body: str) -> tuple[list[dict[str, Any]], str]:
    """Like parse_tools_text, also returning the tools as a JSON list string.

    For NDJSON that is valid JSON (the common case) the string is the original lines joined, so
    the schemas are decoded once (to check them) and never re-encoded.
    """
    body = body.strip()
    if not body:
        return [], "[]"
    if body[0] in "[{" and "\n" not in body and (whole := _tools_from_whole(body)) is not None:
        return whole
    lines = [ln.strip() for ln in body.splitlines()]
    lines = [ln for ln in lines if ln]
    joined = "[" + ", ".join(lines) + "]"
    try:
        values = fastjson.loads(joined)
    except json.JSONDecodeError:
        values = None
    if values is not None and all(isinstance(v, dict) for v in values):
        return values, joined
    whole = _tools_from_whole(body)  # one JSON value spread over several lines (e.g. an indented list)
    if whole is not None:
        return whole
    tools = []
    for k, line in enumerate(lines):
        value = _json_or_literal(line, f"tools line {k}")
        tools.extend(_tool_from_value(value))
    return tools, json.dumps(tools, ensure_ascii=False)


def tools_from_system(text: str) -> list[dict[str, Any]]:
    """Tools listed in the `<tools>` block of a system turn; MarkupError when there is none or it is malformed."""
    return tools_json_from_system(text)[0]


def tools_json_from_system(text: str) -> tuple[list[dict[str, Any]], str]:
    """(tools, the same as a JSON list string) from a system turn's `<tools>` block(s)."""
    found = blocks(text, TOOLS_OPEN, TOOLS_CLOSE)
    if not found:
        raise MarkupError("system turn has no <tools> block")
    # hermes prompts also mention "<tools></tools>" in their prose: empty blocks carry nothing
    found = [b for b in found if b.strip()] or found[:1]
    if len(found) == 1:
        tools, tools_json = parse_tools_json(found[0])
    else:
        tools = [t for body in found for t in parse_tools_json(body)[0]]
        tools_json = json.dumps(tools, ensure_ascii=False)
    bad = guard.decoded_problem(text, tools)
    if bad is not None:
        raise MarkupError(f"<tools> block{' at ' + bad[0] if bad[0] else ''}: {bad[1]}")
    return tools, tools_json


@functools.lru_cache(maxsize=1024)
def system_tools(text: str) -> tuple[tuple[str | None, ...], str]:
    """(tool names, tools as a JSON list string) of a system turn; MarkupError when malformed.

    Cached on the exact text: datasets repeat the same tool set (one MCP server) across many rows,
    and the decode is the costliest step of reading a row. ~15 MB at most for typical prompts.
    """
    tools, tools_json = tools_json_from_system(text)
    return tuple(tool_name(t) for t in tools), tools_json


def tool_name(tool: dict[str, Any]) -> str | None:
    """Name of a tool schema in the OpenAI envelope or bare form."""
    inner = tool.get("function") if isinstance(tool.get("function"), dict) else tool
    name = inner.get("name")
    return name if isinstance(name, str) and name else None


def envelope(tool: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI envelope form {"type": "function", "function": {...}} of a tool schema."""
    if isinstance(tool.get("function"), dict):
        return tool
    return {"type": "function", "function": tool}


def tools_block(tools: list[dict[str, Any]]) -> str:
    """Qwen2.5's hermes tool block with one JSON line per tool (envelope form)."""
    ndjson = "\n".join(json.dumps(envelope(t), ensure_ascii=False) for t in tools)
    return _HERMES_HEAD + ndjson + _HERMES_TAIL


def reference_system(tools: list[dict[str, Any]]) -> str:
    """The system prompt of the reference RL rows: a short preamble plus the hermes tool block."""
    return REFERENCE_SYSTEM_PREFIX + tools_block(tools) + REFERENCE_SYSTEM_SUFFIX


def render_calls(calls: list[dict[str, Any]], *, parallel_style: str = "list") -> str:
    """One assistant step as hermes text: a single object block, or for several calls either one
    block holding a JSON list (`list`, docs/method.md#toucan-conversion qwen style) or one block per call (`blocks`)."""
    def one(c: dict[str, Any]) -> str:
        return json.dumps({"name": c["name"], "arguments": c.get("arguments") or {}}, ensure_ascii=False)

    if len(calls) == 1:
        return f"{CALL_OPEN}\n{one(calls[0])}\n{CALL_CLOSE}"
    if parallel_style == "list":
        body = json.dumps(
            [{"name": c["name"], "arguments": c.get("arguments") or {}} for c in calls], ensure_ascii=False
        )
        return f"{CALL_OPEN}\n{body}\n{CALL_CLOSE}"
    return "\n".join(f"{CALL_OPEN}\n{one(c)}\n{CALL_CLOSE}" for c in calls)


def render_responses(responses: list[str]) -> str:
    """Tool outputs of one step as consecutive `<tool_response>` blocks (one user turn)."""
    return "\n".join(f"{RESP_OPEN}\n{r}\n{RESP_CLOSE}" for r in responses)
