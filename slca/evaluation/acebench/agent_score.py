"""ACEBench's agent scores, by ACEBench's rules (docs/eval.md#acebenchs-agent-categories).

End to end: the episode's end state, one record per involved class, against the gold records. The
counts must be equal; each gold class is compared with the recorded class of the same name (a gold
class no record is named after is not checked); every recorded attribute must be in the gold record
and equal to it, except that an attribute whose gold value is a mapping only needs the gold keys,
each with the gold value. An episode in which no message reached the scenario without an error
records no state, so it fails. Process: 1 for an episode correct end to end; otherwise the share of
a milestone path's calls found, in order, among the messages sent to the scenario (texts compared
with surrounding whitespace removed), the best path where the data lists several (ACEBench rounds
each path's share to three places then, and not for a single path).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from slca.evaluation.acebench.agent_data import AgentEntry


@dataclass(frozen=True)
class Episode:
    """What scoring reads of one agent episode: the messages sent to the scenario, in order, and the end state
    (empty when none of them ran without an error)."""

    process: tuple[str, ...]
    state: tuple[tuple[str, Any], ...]


def _attribute_ok(expected: Any, value: Any) -> bool:
    if isinstance(expected, Mapping):
        return isinstance(value, Mapping) and all(k in value and value[k] == v for k, v in expected.items())
    return expected == value


def end_to_end(truth: Sequence[tuple[str, Mapping[str, Any]]], state: Sequence[tuple[str, Any]]) -> bool:
    """Whether `state` is the gold end state `truth` under ACEBench's comparison."""
    if len(truth) != len(state):
        return False
    for name, gold in truth:
        recorded = next((attrs for cls, attrs in state if cls == name), None)
        if recorded is None:
            continue
        if not all(attr in gold and _attribute_ok(gold[attr], value) for attr, value in recorded.items()):
            return False
    return True


def path_share(path: Sequence[str], process: Sequence[str]) -> float:
    """The share of `path`'s calls found in order in `process` (each matched at the first later message equal to it)."""
    if not path:
        return 1.0
    found, at = 0, 0
    for stone in path:
        while at < len(process):
            at += 1
            if process[at - 1].strip() == stone.strip():
                found += 1
                break
    return found / len(path)


def process_score(entry: AgentEntry, episode: Episode, correct: bool) -> float:
    """ACEBench's process accuracy of one episode."""
    if correct:
        return 1.0
    if entry.several:
        return max(round(path_share(p, episode.process), 3) for p in entry.milestones)
    return path_share(entry.milestones[0], episode.process)


@dataclass(frozen=True)
class AgentScore:
    correct: bool
    process: float


def score_episode(entry: AgentEntry, episode: Episode) -> AgentScore:
    correct = end_to_end(entry.truth, episode.state)
    return AgentScore(correct, process_score(entry, episode, correct))
