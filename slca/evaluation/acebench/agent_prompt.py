"""ACEBench's agent prompts (docs/eval.md#acebenchs-agent-categories).

Each agent step is one fresh request, as ACEBench's agents send it: a system prompt, and one user
turn holding the entry's functions (Python's `str()` of the list, as ACEBench formats it) and the
conversation so far as text, one message per line, as ACEBench's scenes record it. In
agent_multi_step (model_inference/multi_step/APIModel_agent.py) the system prompt carries the
entry's time, and the text holds the request as `user:` and each scenario answer as `execution
result:` (the answer list as Python prints it); the agent's own earlier messages are not in it. In
agent_multi_turn (model_inference/multi_turn/APIModel_agent.py) the system prompt is followed by
the travel and the phone-platform rules (model_inference/prompt_en.py) of the classes involved, and
the text holds every message: `user:`, `agent:` and `execution:`. The texts are read from the
vendored files with `ast`, never imported.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from slca.evaluation.acebench.agent_data import AgentEntry
from slca.evaluation.acebench.agent_loop import EXECUTION, USER, Message
from slca.evaluation.acebench.data import ROOT

MULTI_STEP_FILE = ROOT / "model_inference" / "multi_step" / "APIModel_agent.py"
MULTI_TURN_FILE = ROOT / "model_inference" / "multi_turn" / "APIModel_agent.py"
RULES_FILE = ROOT / "model_inference" / "prompt_en.py"
# Class involved -> the rules ACEBench's multi-turn agent appends for it, in its order.
RULES = (("Travel", "TRAVEL_PROMPT_EN"), ("BaseApi", "BASE_PROMPT_EN"))


def module_strings(path: Path) -> dict[str, str]:
    """The module-level string constants of a Python file, read with ast (the file is not run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.targets[0].id: n.value.value for n in tree.body
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
            and isinstance(n.targets[0], ast.Name)}


def _shown(observation: str) -> str:
    # slca's observation is the answer list as JSON; ACEBench's history prints the Python list.
    try:
        value: Any = json.loads(observation)
    except ValueError:
        return observation
    return str(value) if isinstance(value, list) else observation


def multi_step_messages(entry: AgentEntry, history: Sequence[Message]) -> list[dict[str, str]]:
    """The system and user turns ACEBench's multi-step agent is sent after `history`."""
    prompts = module_strings(MULTI_STEP_FILE)
    lines = [f"user:{m.text}\n" if m.sender == USER else f"execution result:{_shown(m.text)}\n"
             for m in history if m.sender in (USER, EXECUTION)]
    return [{"role": "system", "content": prompts["MULTI_TURN_AGENT_PROMPT_SYSTEM_EN"].format(time=entry.time)},
            {"role": "user", "content": prompts["MULTI_TURN_AGENT_PROMPT_USER_EN"].format(
                functions=list(entry.functions), history="".join(lines))}]


def multi_turn_messages(entry: AgentEntry, history: Sequence[Message]) -> list[dict[str, str]]:
    """The system and user turns ACEBench's multi-turn agent is sent after `history`."""
    prompts, rules = module_strings(MULTI_TURN_FILE), module_strings(RULES_FILE)
    system = prompts["MULTI_TURN_AGENT_PROMPT_SYSTEM_EN"] + "".join(
        rules[name] for cls, name in RULES if cls in entry.involved_classes)
    lines = [f"{m.sender}:{_shown(m.text) if m.sender == EXECUTION else m.text}\n" for m in history]
    return [{"role": "system", "content": system},
            {"role": "user", "content": prompts["MULTI_TURN_AGENT_PROMPT_USER_EN"].format(
                functions=list(entry.functions), history="".join(lines))}]


def agent_messages(entry: AgentEntry, history: Sequence[Message]) -> list[dict[str, str]]:
    """The turns ACEBench's agent of `entry`'s category is sent after `history`."""
    return (multi_turn_messages if entry.category == "agent_multi_turn" else multi_step_messages)(entry, history)
