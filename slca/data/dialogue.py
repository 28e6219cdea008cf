"""A ShareGPT + hermes SFT row (`conversations: [{from, value}]`) parsed into typed turns.

One parse serves validation, the LLaMA-Factory converter and the RL derivation, so they agree on
what a row means. Problems are collected as (field, reason) pairs instead of raised.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from slca.data import fastjson, hermes

Role = Literal["user", "assistant", "tool"]
_ROLES = frozenset(("system", "human", "gpt"))
CALL_OPEN, CALL_CLOSE = hermes.CALL_OPEN, hermes.CALL_CLOSE
RESP_OPEN, RESP_CLOSE = hermes.RESP_OPEN, hermes.RESP_CLOSE


@dataclass(slots=True)
class Turn:
    """One non-system turn. `tool` turns carry `responses`; assistant turns carry `calls` (all
    calls of the turn, flattened: one turn = one step) and `text` (prose outside the call blocks)."""

    role: Role
    text: str
    index: int  # position in `conversations`
    calls: list[dict[str, Any]] = field(default_factory=list)
    n_blocks: int = 0
    responses: list[str] = field(default_factory=list)


@dataclass
class Dialogue:
    system: str
    tools_json: str  # the system turn's tools as a JSON list string (the source lines when NDJSON)
    tool_names: list[str]
    turns: list[Turn]
    _tools: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tool schemas, decoded on first use (conversion only needs the JSON text)."""
        if self._tools is None:
            self._tools = fastjson.loads(self.tools_json)
        return self._tools


def parse_conversations(conv: Any) -> tuple[Dialogue | None, list[tuple[str, str]]]:
    """Parse and check `conversations`; returns (dialogue or None, [(field, reason), ...]).

    Rules: a list of {from, value} with `from` in system|human|gpt and string values; exactly one
    system turn, first, holding a parseable `<tools>` block; then a human turn first and a gpt
    turn last; balanced tags; `<tool_call>` only in gpt turns, each body JSON or a Python
    literal, naming known tools; `<tool_response>` only in human turns, each following a gpt turn with calls.
    """
    errs: list[tuple[str, str]] = []
    if not isinstance(conv, list):
        if hasattr(conv, "tolist"):  # numpy arrays from pandas-read parquet
            conv = conv.tolist()
        else:
            return None, [("conversations", f"wrong type: expected list, got {type(conv).__name__}")]
    if not conv:
        return None, [("conversations", "empty conversation")]
    for i, t in enumerate(conv):
        if type(t) is dict and type(t.get("from")) is str and t["from"] in _ROLES and type(t.get("value")) is str:
            continue  # the common case, checked cheaply
        if not isinstance(t, dict):
            errs.append((f"conversations[{i}]", f"wrong type: expected object, got {type(t).__name__}"))
            continue
        if not isinstance(t.get("from"), str) or t["from"] not in _ROLES:  # a list here is unhashable
            errs.append((f"conversations[{i}].from", f"unknown role {t.get('from')!r} (expected system, human or gpt)"))
        if not isinstance(t.get("value"), str):
            errs.append((f"conversations[{i}].value", f"wrong type: expected str, got {type(t.get('value')).__name__}"))
    if errs:
        return None, errs
    if conv[0]["from"] != "system":
        return None, [("conversations[0].from", "first turn must be the system turn with <tools>")]
    try:
        tool_names, tools_json = hermes.system_tools(conv[0]["value"])
    except hermes.MarkupError as exc:
        return None, [("conversations[0].value", str(exc))]
    for k, n in enumerate(tool_names):
        if n is None:
            errs.append(("conversations[0].value", f"tool {k} has no name"))
    names = set(tool_names)
    n_conv = len(conv)
    if n_conv == 1:
        errs.append(("conversations", "no turns after the system turn"))
    elif conv[1]["from"] != "human":
        errs.append(("conversations[1].from", "first turn after system must be human"))
    elif conv[-1]["from"] != "gpt":
        errs.append((f"conversations[{n_conv - 1}].from", "last turn must be gpt"))
    turns: list[Turn] = []
    prev_calls = False
    for i in range(1, n_conv):
        t = conv[i]
        v = t["value"]
        role = t["from"]
        if role == "gpt":
            if RESP_OPEN in v or RESP_CLOSE in v:
                errs.append((f"conversations[{i}].value", "<tool_response> inside a gpt turn"))
                continue
            try:
                inners, out = hermes.split_blocks(v, CALL_OPEN, CALL_CLOSE)
                calls = [c for b in inners for c in hermes.parse_call_block(b)]
            except hermes.MarkupError as exc:
                errs.append((f"conversations[{i}].value", str(exc)))
                continue
            for c in calls:
                if c["name"] not in names:
                    errs.append((f"conversations[{i}].value", f"unknown tool {c['name']!r} (not in the system <tools>)"))
            turns.append(Turn("assistant", out.strip() if inners else v, i, calls, len(inners), []))
            prev_calls = bool(calls)
        elif role == "human":
            if CALL_OPEN in v or CALL_CLOSE in v:
                errs.append((f"conversations[{i}].value", "<tool_call> inside a human turn"))
                continue
            try:
                inners, out = hermes.split_blocks(v, RESP_OPEN, RESP_CLOSE)
            except hermes.MarkupError as exc:
                errs.append((f"conversations[{i}].value", str(exc)))
                continue
            if inners:
                if not prev_calls and not (turns and turns[-1].role == "tool"):
                    errs.append((f"conversations[{i}].value", "<tool_response> without a preceding tool call"))
                turns.append(Turn("tool", out.strip(), i, [], 0, [b.strip() for b in inners]))
            else:
                turns.append(Turn("user", v, i, [], 0, []))
                prev_calls = False
        else:
            errs.append((f"conversations[{i}].from", "system turn after the first turn"))
    if errs:
        return None, errs
    return Dialogue(conv[0]["value"], tools_json, [n for n in tool_names if n], turns), []


def user_key(turn_texts: list[str]) -> str:
    """Content hash of a trajectory: sha256 over its user texts (tool outputs excluded), so two
    rows asking the same things collide even when their tool lists differ."""
    h = hashlib.sha256()
    for t in turn_texts:
        h.update(t.strip().encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


def dialogue_key(d: Dialogue) -> str:
    return user_key([t.text for t in d.turns if t.role == "user"])


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
