"""Shared pieces of the curation tests: toy spec overrides, marked RL rows and a scripted policy.

The scripted policy is a real HTTP completions endpoint (tests.conftest.serve_scripted) that the
curation reaches through the `openai` generator. Each marked row's last user message ends with
"[case N]"; the endpoint answers case N's first turn with its gold call (from the row's own
ground truth) when the case's behaviour says so, a call to a tool that does not exist otherwise,
and every turn after a tool response with a plain final answer.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from slca.data.schemas import gold_steps

CASE = re.compile(r"\[case (\d+)\]")


def toy_overrides(work: Path, max_response_length: int = 96) -> list[str]:
    """A small synthetic set and the tiny backbone, cached under `work`; exact match scores; one torch
    thread (on shared test machines more threads stall each other)."""
    return ["data.seed=3", "data.n_sft=150", "data.n_rl=60", "data.n_eval=20", f"data.cache_dir={work}/data",
            f"backbone.cache_dir={work}/backbones", "logger=none", "reward=exact_match", "backend.num_threads=1",
            f"train.rl.max_response_length={max_response_length}"]


def synthetic_rl(work: Path) -> Path:
    from slca.config.compose import compose_spec
    from slca.data.synth import ensure_synthetic

    return ensure_synthetic(compose_spec(toy_overrides(work)).data).rl


def gold_calls(row: dict[str, Any]) -> list[dict[str, Any]]:
    steps, _ = gold_steps(row["reward_model"]["ground_truth"]["gold_tool_calls"])
    return [c for step in steps for c in step]


def marked_table(source: Path, behaviours: list[str]) -> tuple[pa.Table, dict[int, tuple[str, dict[str, Any]]]]:
    """Rows of `source` with exactly one gold call, one per behaviour, marked "[case i]"; (table with
    the source schema, {case: (behaviour, gold call)})."""
    table = pq.read_table(source)
    plan: dict[int, tuple[str, dict[str, Any]]] = {}
    rows = []
    seen = set()
    for row in table.to_pylist():
        calls = gold_calls(row)
        question = row["prompt"][-1]["content"]
        if len(calls) != 1 or question in seen:
            continue
        seen.add(question)
        case = len(rows)
        row["prompt"][-1]["content"] = f"{question} [case {case}]"
        plan[case] = (behaviours[case], calls[0])
        rows.append(row)
        if len(rows) == len(behaviours):
            break
    assert len(rows) == len(behaviours), "the synthetic set has too few single-call rows"
    return pa.Table.from_pylist(rows, schema=table.schema), plan


def completion(text: str, stop_reason: str | None = None) -> bytes:
    choice: dict[str, Any] = {"index": 0, "text": text, "finish_reason": "stop"}
    if stop_reason:
        choice["stop_reason"] = stop_reason
    return json.dumps({"choices": [choice]}).encode()


def coin(seed: int, case: int) -> bool:
    return hashlib.sha256(f"{seed}/{case}".encode()).digest()[0] % 2 == 0


def scripted_policy(plan: dict[int, tuple[str, dict[str, Any]]]):  # type: ignore[no-untyped-def]
    """The endpoint's reply function for `plan` (see the module docstring)."""

    def reply(body: dict[str, Any]) -> tuple[int, bytes, float]:
        prompt = body["prompt"]
        cases = CASE.findall(prompt)
        if not cases or "<tool_response>" in prompt[prompt.rfind("[case") :]:
            return 200, completion("Done."), 0.0
        case = int(cases[-1])
        behaviour, call = plan[case]
        solves = {"always": True, "never": False, "half": body["seed"] % 2 == 0, "coin": coin(body["seed"], case)}[behaviour]
        shown = call if solves else {"name": "no_such_tool", "arguments": {}}
        arguments = shown.get("arguments", {})
        arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
        text = "<tool_call>\n" + json.dumps({"name": shown["name"], "arguments": arguments}) + "\n</tool_call>"
        return 200, completion(text, stop_reason="<|im_end|>"), 0.0  # a turn ends where the policy ends it

    return reply
