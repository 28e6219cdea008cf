"""Render a tool-use conversation into a prompt string.

Messages are dicts {role: system|user|assistant|tool, content, tool_calls?: [{name, arguments}],
reasoning?: str}. Two construction modes (efficiency paper, Fig. 2):
* native  — history as role messages through the chat template;
* context — every turn before the last user message written out as text inside that one user
  turn, then rendered with the same template (the current turn's own steps stay role messages).
Thinking of previous turns (assistant messages before the last user message) is kept or dropped.
With no tokenizer, a built-in ChatML (Qwen-style) renderer stands in for the chat template.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from slca.toolcall.parse import strip_thinking
from slca.toolcall.prompts import PromptSpec, resolve_prompt, tools_block, tools_for_template

Construction = Literal["native", "context"]
Thinking = Literal["keep", "drop"]
CONSTRUCTIONS: tuple[str, ...] = ("native", "context")
THINKING_MODES: tuple[str, ...] = ("keep", "drop")

HISTORY_HEADING = "Conversation so far:"
QUESTION_HEADING = "Current question:"


def _call_parts(call: dict[str, Any]) -> tuple[str, Any]:
    """(name, arguments) of a call given flat {name, arguments} or OpenAI {function: {...}}."""
    fn = call.get("function") if isinstance(call.get("function"), dict) else call
    args = fn.get("arguments")
    if args is None:
        args = fn.get("parameters")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            pass
    return str(fn.get("name", "")), {} if args is None else args


def format_tool_calls(calls: Sequence[dict[str, Any]], *, style: Literal["blocks", "list"] = "blocks") -> str:
    """Hermes text for calls: one `<tool_call>` block per call, or one block with a JSON list."""
    objs = [{"name": n, "arguments": a} for n, a in map(_call_parts, calls)]
    if not objs:
        return ""
    if style == "list":
        return "<tool_call>\n" + json.dumps(objs, ensure_ascii=False) + "\n</tool_call>"
    return "\n".join("<tool_call>\n" + json.dumps(o, ensure_ascii=False) + "\n</tool_call>" for o in objs)


def _with_thinking(msg: dict[str, Any], keep: bool) -> str:
    """Assistant content with reasoning inlined as `<think>` (keep) or all thinking removed (drop)."""
    content = msg.get("content") or ""
    if not keep:
        return strip_thinking(content).lstrip("\n")
    reasoning = msg.get("reasoning")
    if reasoning:
        think = f"<think>\n{reasoning.strip()}\n</think>"
        return f"{think}\n\n{content.lstrip()}" if content.strip() else think
    return content


def _last_user_index(messages: Sequence[dict[str, Any]]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return -1


def _prepare(messages: Sequence[dict[str, Any]], thinking: Thinking) -> list[dict[str, Any]]:
    """Copy messages, inlining or dropping the reasoning of assistant turns before the last user message."""
    if thinking not in THINKING_MODES:
        raise ValueError(f"thinking must be one of {THINKING_MODES}, got {thinking!r}")
    last_user = _last_user_index(messages)
    out = []
    for i, m in enumerate(messages):
        m = dict(m)
        if m.get("role") == "assistant":
            # The current turn's own steps (after the last user message) always keep their reasoning.
            m["content"] = _with_thinking(m, keep=thinking == "keep" or i > last_user)
            m.pop("reasoning", None)
        out.append(m)
    return out


def history_as_context(history: Sequence[dict[str, Any]], question: str) -> str:
    """One user-turn text: earlier turns written out under a heading, then the current question."""
    if not history:
        return question
    lines = [HISTORY_HEADING]
    for m in history:
        role = m.get("role", "")
        content = (m.get("content") or "").strip()
        if role == "assistant":
            calls = format_tool_calls(m.get("tool_calls") or [])
            body = "\n".join(p for p in (content, calls) if p)
            lines.append(f"[assistant]\n{body}")
        elif role == "tool":
            lines.append(f"[tool]\n<tool_response>\n{content}\n</tool_response>")
        else:
            lines.append(f"[{role}]\n{content}")
    return "\n\n".join(lines) + f"\n\n{QUESTION_HEADING}\n{question}"


def _to_context(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    last_user = _last_user_index(messages)
    if last_user < 0:
        return messages
    system = [m for m in messages[:last_user] if m.get("role") == "system"][:1]
    history = [m for m in messages[:last_user] if m.get("role") != "system"]
    user = {"role": "user", "content": history_as_context(history, messages[last_user].get("content") or "")}
    return [*system, user, *messages[last_user + 1 :]]


# ----------------------------------------------------------------------------- ChatML renderer


def _chatml_system(system: str | None, tools: Sequence[Any] | None) -> str | None:
    parts = [p for p in (system, tools_block(tools) if tools else None) if p]
    if tools:
        parts.append(
            "To call functions, write one JSON object per call inside <tool_call></tool_call> tags:\n"
            '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
        )
    return "\n\n".join(parts) if parts else None


def render_chatml(
    messages: Sequence[dict[str, Any]],
    tools: Sequence[Any] | None = None,
    *,
    add_generation_prompt: bool = True,
    return_spans: bool = False,
) -> str | tuple[str, list[tuple[int, int, str]]]:
    """Template-free Qwen-style ChatML rendering (`<|im_start|>role\\n…<|im_end|>\\n`).

    The tools block goes into the system turn; assistant tool calls become hermes `<tool_call>`
    blocks; consecutive tool results form one user turn of `<tool_response>` blocks.
    With return_spans, also returns (start, end, role) per message body; an assistant span
    includes its closing `<|im_end|>` (the policy learns to emit it), so it feeds `split_spans`.
    """
    out: list[str] = []
    spans: list[tuple[int, int, str]] = []
    size = 0

    def emit(role: str, body: str, span_role: str, include_end: bool) -> None:
        nonlocal size
        head = f"<|im_start|>{role}\n"
        text = f"{head}{body}<|im_end|>\n"
        start = size + len(head)
        end = start + len(body) + (len("<|im_end|>") if include_end else 0)
        spans.append((start, end, span_role))
        out.append(text)
        size += len(text)

    msgs = list(messages)
    system_text = None
    if msgs and msgs[0].get("role") == "system":
        system_text = msgs.pop(0).get("content") or ""
    system_body = _chatml_system(system_text, tools)
    if system_body is not None:
        emit("system", system_body, "system", False)
    i = 0
    while i < len(msgs):
        m = msgs[i]
        role = m.get("role")
        if role == "tool":
            group = []
            while i < len(msgs) and msgs[i].get("role") == "tool":
                group.append(f"<tool_response>\n{msgs[i].get('content') or ''}\n</tool_response>")
                i += 1
            emit("user", "\n".join(group), "tool", False)
            continue
        if role == "assistant":
            content = m.get("content") or ""
            calls = format_tool_calls(m.get("tool_calls") or [])
            body = content + ("\n" if content and calls else "") + calls
            emit("assistant", body, "assistant", True)
        else:
            emit(str(role), m.get("content") or "", str(role), False)
        i += 1
    if add_generation_prompt:
        out.append("<|im_start|>assistant\n")
    text = "".join(out)
    return (text, spans) if return_spans else text


# ----------------------------------------------------------------------------- entry point


def _template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-style messages for a HF chat template (tool calls under `function`, dict arguments)."""
    out = []
    for m in messages:
        m = {k: v for k, v in m.items() if v is not None}
        if m.get("tool_calls"):
            m["tool_calls"] = [
                {"type": "function", "function": {"name": n, "arguments": a}}
                for n, a in map(_call_parts, m["tool_calls"])
            ]
        out.append(m)
    return out


def prompt_messages(
    messages: Sequence[dict[str, Any]],
    tools: Sequence[Any] | None = None,
    *,
    construction: Construction = "native",
    thinking: Thinking = "keep",
    system_prompt: str | PromptSpec = "dataset",
    template_tools: bool | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """The messages a chat template should render under one protocol, and the tools it should get.

    Applies the system prompt, the thinking rule and the construction (see `render`); returns
    (messages, tools for the template — in the envelope form of `tools_for_template` — or None when the
    system prompt already shows them).
    """
    if construction not in CONSTRUCTIONS:
        raise ValueError(f"construction must be one of {CONSTRUCTIONS}, got {construction!r}")
    spec = resolve_prompt(system_prompt)
    tools = tools_for_template(tools)
    msgs = _prepare(messages, thinking)
    row_system = None
    if msgs and msgs[0].get("role") == "system":
        row_system = msgs.pop(0).get("content") or None
    system = spec.build(tools, row_system)
    if system is not None:
        msgs.insert(0, {"role": "system", "content": system})
    if construction == "context":
        msgs = _to_context(msgs)
    pass_tools = (not spec.shows_tools(system, tools)) if template_tools is None else template_tools
    return msgs, (tools if (pass_tools and tools) else None)


def render(
    messages: Sequence[dict[str, Any]],
    tools: Sequence[Any] | None = None,
    *,
    tokenizer: Any = None,
    construction: Construction = "native",
    thinking: Thinking = "keep",
    system_prompt: str | PromptSpec = "dataset",
    template_tools: bool | None = None,
) -> str:
    """Render messages + tools into a generation prompt string.

    tokenizer: a HF tokenizer whose chat template is used (`apply_chat_template(..., tokenize=False,
        add_generation_prompt=True)`); None = the built-in ChatML renderer.
    construction: "native" | "context" (see module doc). thinking: "keep" | "drop" for earlier turns.
    system_prompt: a registered name (bfcl_default, stronger, none, dataset), a file path or a
        PromptSpec; `dataset` keeps the row's own system message.
    template_tools: whether the template also receives `tools`; None = only when the system prompt
        does not already show them.
    Note: some templates (Qwen3) drop reasoning of earlier turns themselves, whatever `thinking` says.
    """
    msgs, tpl_tools = prompt_messages(
        messages, tools, construction=construction, thinking=thinking, system_prompt=system_prompt, template_tools=template_tools
    )
    if tokenizer is None:
        return render_chatml(msgs, tpl_tools)  # type: ignore[return-value]
    return tokenizer.apply_chat_template(
        _template_messages(msgs), tools=tpl_tools, tokenize=False, add_generation_prompt=True
    )
