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


def run_episode(entry: AgentEntry, agent: Speaker, user: Speaker | None = None, *,
                max_messages: int = MAX_MESSAGES) -> tuple[Episode, list[Message]]:
    """One episode of `entry`: its scored part and the whole conversation. `user` is required in agent_multi_turn."""
    run = AgentRun(entry)
    if run.has_user:
        if user is None:
            raise ValueError(f"{entry.id}: agent_multi_turn needs a user simulator")
        history = [Message(USER, AGENT, user([]))]
    else:
        history = [Message(USER, AGENT, entry.question)]
    for index in range(max_messages):
        last = history[-1]
        if last.recipient == USER:
            assert user is not None
            message = Message(USER, AGENT, user(history))
        elif last.recipient == AGENT:
            text = agent(history)
            message = Message(AGENT, EXECUTION if run.takes(text) else USER, text)
        else:
            observation = run.send(last.text)
            message = Message(EXECUTION, AGENT, observation if observation is not None else "")
        history.append(message)
        # ACEBench's check meets the scenario's answers as a list, where the phrase never matches.
        if index > 1 and message.sender != EXECUTION and FINISH in message.text:
            break
    return run.episode(), history
