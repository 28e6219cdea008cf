"""SFT rows (ShareGPT + hermes) as chat messages and as text rendered with a chat template: what SFT
trains on, and the corpus the tiny backbone's tokenizer is trained on.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from slca.models.chat_template import render_with_spans
from slca.toolcall.prompts import split_system_tools, tools_for_template

_ROLES = {"human": "user", "gpt": "assistant"}


def sharegpt_to_messages(row: Any) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """A ShareGPT row (`{"conversations": [...]}` or the list itself) → (chat messages, tools).

    The system turn loses its `<tools>` block (the template re-renders it, from the tools in the form
    RL and evaluation hand it: `tools_for_template`); human and gpt turns
    are kept verbatim, so hermes markup in them is trained on exactly as stored. Raises
    ValueError("<field>: <reason>") on malformed rows.
    """
    conv = row.get("conversations") if isinstance(row, dict) else row
    if hasattr(conv, "tolist"):
        conv = conv.tolist()
    if not isinstance(conv, list) or not conv:
        raise ValueError("conversations: missing, empty or not a list")
    messages: list[dict[str, str]] = []
    tools: list[dict[str, Any]] = []
    for i, turn in enumerate(conv):
        if not isinstance(turn, dict) or not isinstance(turn.get("value"), str):
            raise ValueError(f"conversations[{i}]: expected {{from, value}} with a string value")
        who = turn.get("from")
        if who == "system":
            if i != 0:
                raise ValueError(f"conversations[{i}].from: system turn after the first turn")
            if "<tools>" in turn["value"]:
                try:
                    base, tools = split_system_tools(turn["value"])
                except ValueError as exc:
                    raise ValueError(f"conversations[0].value: {exc}") from None
            else:
                base = turn["value"]
            if base is not None:
                messages.append({"role": "system", "content": base})
        elif who in _ROLES:
            messages.append({"role": _ROLES[who], "content": turn["value"]})
        else:
            raise ValueError(f"conversations[{i}].from: unknown role {who!r}")
    if not any(m["role"] == "assistant" for m in messages):
        raise ValueError("conversations: no gpt turn to learn from")
    return messages, tools_for_template(tools)


def render_row(row: Any, template: str, **template_vars: Any) -> tuple[str, list[tuple[int, int]]]:
    """Rendered text of a ShareGPT row and its assistant character spans."""
    messages, tools = sharegpt_to_messages(row)
    return render_with_spans(messages, tools or None, template=template, **template_vars)


def sft_corpus(rows: Iterable[Any], template: str, **template_vars: Any) -> Iterable[str]:
    """Rendered texts of the well-formed rows (what the tiny tokenizer is trained on)."""
    for row in rows:
        try:
            yield render_row(row, template, **template_vars)[0]
        except ValueError:
            continue
