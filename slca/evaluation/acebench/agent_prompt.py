"""ACEBench's agent prompt for agent_multi_step (docs/eval.md#acebenchs-agent-categories).

Each agent step is one fresh request, as ACEBench's multi-step agent sends it: its system prompt,
and one user turn holding the entry's functions (Python's `str()` of the list, as ACEBench formats
it) and the conversation so far as text. That text is what ACEBench's scene records for the agent:
the request as `user:` and each scenario answer as `execution result:` (the answer list as Python
prints it), one per line; the agent's own earlier messages are not in it. The texts are read from the
vendored model_inference/multi_step/APIModel_agent.py with `ast`, never imported.
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
