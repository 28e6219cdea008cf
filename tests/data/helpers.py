"""Test helpers: paths of the reference samples and the inverse of the reference SFT layout."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any
from tests.reference import SAMPLES as REFERENCE_SAMPLES

SAMPLES = REFERENCE_SAMPLES
SFT_PREVIEW = SAMPLES / "toucan_toolcall_sft.preview.jsonl"
RL_PREVIEW = SAMPLES / "toucan_toolcall_rl.preview.jsonl"


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def conversations_from_reference(row: dict[str, Any]) -> dict[str, Any]:
    """Rebuild a ShareGPT + hermes SFT row from a row of the reference materialised layout.

    Runs of tool_call messages become one gpt turn with one block holding the JSON list; each
    tool_response becomes its own human turn (the materialiser keeps one block per turn).
    """
    tools = json.loads(row["tools"])
    system = "<tools>\n" + "\n".join(json.dumps(t, ensure_ascii=False) for t in tools) + "\n</tools>"
    conv = [{"from": "system", "value": system}]
    pending: list[dict[str, Any]] = []

    def flush() -> None:
        if pending:
            body = json.dumps(pending if len(pending) > 1 else pending[0], ensure_ascii=False)
            conv.append({"from": "gpt", "value": f"<tool_call>\n{body}\n</tool_call>"})
            pending.clear()

    for m in json.loads(row["messages"]):
        if m["role"] == "tool_call":
            c = ast.literal_eval(m["content"])
            pending.append({"name": c["name"], "arguments": json.loads(c["arguments"])})
            continue
        flush()
        if m["role"] == "user":
            conv.append({"from": "human", "value": m["content"]})
        elif m["role"] == "assistant":
            conv.append({"from": "gpt", "value": m["content"]})
        elif m["role"] == "tool_response":
            conv.append({"from": "human", "value": f"<tool_response>\n{m['content']}\n</tool_response>"})
    flush()
    out = {k: v for k, v in row.items() if k not in ("tools", "messages")}
    out["conversations"] = conv
    return out
