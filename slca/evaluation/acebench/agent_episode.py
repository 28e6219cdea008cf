"""One ACEBench agent episode on the scenario side (docs/eval.md#acebenchs-agent-categories).

In agent_multi_turn ACEBench sends an agent message to the scenario when it holds a bracketed span
on one line and reads as calls (slca.evaluation.acebench.decode.decode_agent); any other message
goes to the user. In agent_multi_step there is no user: every message goes to the scenario, and one
that does not read as calls is answered with a fixed reminder. Every message sent to the scenario
is a step of the process, whether or not its calls ran; the end state is recorded once one message
has run without an error (ACEBench records the classes only then; in agent_multi_step its own
inference stops with an exception when a call fails, slca records and goes on).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from slca.evaluation.acebench.agent_data import AgentEntry
from slca.evaluation.acebench.agent_score import Episode
from slca.evaluation.acebench.decode import Decoded, decode_agent
from slca.evaluation.acebench.scenarios import Scenario

BRACKETED = re.compile(r"\[.*\]")
NOT_CALLS = "Please do not ask me any questions, use the known conditions to solve the problem"  # ACEBench's multi-step answer


class AgentRun:
    """The scenario of one entry and what the agent's messages have done to it so far."""

    def __init__(self, entry: AgentEntry) -> None:
        self.scenario = Scenario(entry.involved_classes, entry.initial_config)
        self.has_user = entry.category == "agent_multi_turn"
        self.process: list[str] = []
        self.recorded = False

    def takes(self, text: str) -> bool:
        """Whether an agent message goes to the scenario (in agent_multi_turn, else to the user)."""
        return self._taken(text) is not None

    def _taken(self, text: str) -> Decoded | None:
        """The message decoded when the scenario takes it, else None (decoded once for both questions)."""
        if self.has_user and not BRACKETED.search(text):
            return None
        decoded = decode_agent(text)
        return decoded if decoded.ok or not self.has_user else None

    def send(self, text: str) -> str | None:
        """The scenario's observation for an agent message it takes, None for one that goes to the user."""
        decoded = self._taken(text)
        if decoded is None:
            return None
        self.process.append(text)
        if not decoded.ok:
            return NOT_CALLS
        outcome = self.scenario.run(decoded.calls)
        self.recorded = self.recorded or outcome.error is None
        return outcome.observation()

    def episode(self) -> Episode:
        return Episode(tuple(self.process), self.scenario.state() if self.recorded else ())


def replay(entry: AgentEntry, messages: Iterable[str]) -> Episode:
    """The episode of an agent that says `messages`, in order, whatever the scenario answers."""
    run = AgentRun(entry)
    for text in messages:
        run.send(text)
    return run.episode()
