"""ACEBench's LLM user simulator over slca's HTTP client (docs/eval.md#acebenchs-agent-categories).

The simulator is told the entry's instructions by ACEBench's own user prompt (the phone-platform or
the travel one, as the entry's classes decide; the texts are read from the vendored
model_inference/multi_turn/APIModel_user.py, never imported) and opens with its answer to ACEBench's
fixed greeting. It then answers each agent message it is sent. Its own messages are kept in its
conversation under the role ACEBench gives them ("system") and the agent's under "user", with a
leading "user:" or "agent:" removed, as ACEBench keeps them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from slca.config.acebench import AceBenchUser
from slca.evaluation.acebench.agent_data import AgentEntry
from slca.evaluation.acebench.agent_loop import Message
from slca.evaluation.acebench.agent_prompt import module_strings
from slca.evaluation.acebench.data import ROOT
from slca.http import HttpClient, chat_content

PROMPTS_FILE = ROOT / "model_inference" / "multi_turn" / "APIModel_user.py"
GREETING = "Is there anything you need help with today?"


def system_prompt(entry: AgentEntry) -> str:
    """ACEBench's user prompt for `entry`: the phone-platform one when BaseApi is involved, else the travel one."""
    name = "SYSTEM_PROMPT_BASE_EN" if "BaseApi" in entry.involved_classes else "SYSTEM_PROMPT_TRAVEL_EN"
    return module_strings(PROMPTS_FILE)[name].format(instruction=entry.question)


def _without_role_prefix(text: str) -> str:
    for prefix in ("user:", "agent:"):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


class UserSimulator:
    """One entry's simulated user: call it with the conversation so far for its next message."""

    def __init__(self, cfg: AceBenchUser, entry: AgentEntry, client: HttpClient | None = None) -> None:
        self.cfg = cfg
        self.client = client or HttpClient(cfg, "/chat/completions")
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt(entry)},
                                               {"role": "user", "content": GREETING}]

    def __call__(self, history: Sequence[Message]) -> str:
        if history:
            self.messages.append({"role": "user", "content": _without_role_prefix(history[-1].text)})
        body = {"model": self.cfg.model, "messages": self.messages, "temperature": self.cfg.temperature,
                "top_p": self.cfg.top_p, "max_tokens": self.cfg.max_tokens}
        reply = self.client.post(body, chat_content)
        self.messages.append({"role": "system", "content": reply})
        return reply
