"""ACEBench's agent conversation protocol, with the agent and the user as callables
(docs/eval.md#acebenchs-agent-categories).

Who speaks next, as ACEBench's inference decides it: in agent_multi_turn the simulated user opens,
then the message's recipient answers (the agent; the scenario when the agent's message reads as
calls, slca.evaluation.acebench.agent_episode; the user otherwise). In agent_multi_step the user's
request opens and the agent and the scenario alternate. A message holding "finish conversation"
(from the user or the agent) ends the episode from the third message on, and at most MAX_MESSAGES messages follow the opening
(ACEBench's max_dialog_turns). The callables are the policy and the user simulator: each gets the
conversation so far and returns its next message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from slca.evaluation.acebench.agent_data import AgentEntry
from slca.evaluation.acebench.agent_episode import AgentRun
from slca.evaluation.acebench.agent_score import Episode

MAX_MESSAGES = 40
FINISH = "finish conversation"
USER, AGENT, EXECUTION = "user", "agent", "execution"


@dataclass(frozen=True)
class Message:
    sender: str
    recipient: str
    text: str


Speaker = Callable[[Sequence[Message]], str]


class Conversation:
    """One episode in progress, stepped from outside so that many can wait on one batched agent turn:
    `turn()` answers the messages sent to the scenario and says who speaks next, `say(text)` adds
    that speaker's message."""

    def __init__(self, entry: AgentEntry, opening: str, max_messages: int = MAX_MESSAGES) -> None:
        self.entry = entry
        self.run = AgentRun(entry)
        self.history = [Message(USER, AGENT, opening)]
        self.max_messages = max_messages
        self.over = max_messages < 1

    def turn(self) -> str | None:
        """AGENT or USER, whoever speaks next; None once the episode is over."""
        while not self.over and self.history[-1].recipient == EXECUTION:
            observation = self.run.send(self.history[-1].text)
            self._add(Message(EXECUTION, AGENT, observation if observation is not None else ""))
        return None if self.over else self.history[-1].recipient

    def say(self, text: str) -> None:
        """The next message, from the speaker `turn()` named."""
        if self.history[-1].recipient == AGENT:
            self._add(Message(AGENT, EXECUTION if self.run.takes(text) else USER, text))
        else:
            self._add(Message(USER, AGENT, text))

    def end(self) -> None:
        """Stop here (the agent cannot be asked: its prompt is over the evaluation's cap)."""
        self.over = True

    def _add(self, message: Message) -> None:
        self.history.append(message)
        index = len(self.history) - 2  # messages after the opening, less one
        # ACEBench's check meets the scenario's answers as a list, where the phrase never matches.
        finished = index > 1 and message.sender != EXECUTION and FINISH in message.text
        self.over = finished or index + 1 >= self.max_messages


def opening(entry: AgentEntry, user: Speaker | None) -> str:
    """The episode's first message: the simulated user's in agent_multi_turn, else the entry's request."""
    if entry.category != "agent_multi_turn":
        return entry.question
    if user is None:
        raise ValueError(f"{entry.id}: agent_multi_turn needs a user simulator")
    return user([])


def run_episode(entry: AgentEntry, agent: Speaker, user: Speaker | None = None, *,
                max_messages: int = MAX_MESSAGES) -> tuple[Episode, list[Message]]:
    """One episode of `entry`: its scored part and the whole conversation. `user` is required in agent_multi_turn."""
    conv = Conversation(entry, opening(entry, user), max_messages)
    while (speaker := conv.turn()) is not None:
        conv.say(agent(conv.history) if speaker == AGENT else user(conv.history))  # type: ignore[misc]
    return conv.run.episode(), conv.history
