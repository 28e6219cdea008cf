"""ACEBench's English agent entries from the vendored copy (docs/eval.md#acebenchs-agent-categories).

An agent entry names the scenario classes it involves (`involved_classes`, ACEBench's phone
platform and travel classes), their starting attributes (`initial_config`), the functions shown to
the agent and, for agent_multi_turn, the instructions the simulated user follows (`question`; in
agent_multi_step it is the user's one request). Its ground truth is the end state of every involved
class, as {class name: {attribute: value}} records, and the milestone calls (`mile_stone`): one
list of call texts, or in some multi-turn entries several lists, each an acceptable path. The gold
states are kept as written, misspelt class names included (one ReminderAPI, one Reminderpi, one
BaseAPI): ACEBench's scorer leaves such a class unchecked, and so does slca's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slca.config.benchmarks import ACEBENCH_AGENT_CATEGORIES
from slca.evaluation.acebench.data import DATA_DIR, AceBenchDataError, category_files, checked_functions, read_lines

AGENT_CATEGORIES = ACEBENCH_AGENT_CATEGORIES


@dataclass(frozen=True)
class AgentEntry:
    """One agent entry with its ground truth.

    truth: the gold end state, one (class name, attributes) pair per class, in the data's order.
    milestones: the acceptable call paths (one unless the data lists several), each a tuple of
    call texts; `several` records which way the data wrote them, since ACEBench rounds the two
    differently when it scores the path followed.
    """

    id: str
    category: str
    question: str
    initial_config: Mapping[str, Any]
    involved_classes: tuple[str, ...]
    functions: tuple[dict[str, Any], ...]
    time: str
    truth: tuple[tuple[str, Mapping[str, Any]], ...]
    milestones: tuple[tuple[str, ...], ...]
    several: bool


def _truth(where: str, truth: Any) -> tuple[tuple[str, Mapping[str, Any]], ...]:
    records = truth if isinstance(truth, list) else [truth]
    if not records or not all(isinstance(r, Mapping) and len(r) == 1 and isinstance(next(iter(r.values())), Mapping)
                              for r in records):
        raise AceBenchDataError(f"{where}: ground_truth: expected a list of {{class name: {{attribute: value}}}} records")
    return tuple(next(iter(r.items())) for r in records)


def _milestones(where: str, stones: Any) -> tuple[tuple[tuple[str, ...], ...], bool]:
    several = isinstance(stones, list) and bool(stones) and isinstance(stones[0], list)
    paths = stones if several else [stones]
    if not isinstance(stones, list) or not stones or not all(
            isinstance(p, list) and all(isinstance(s, str) for s in p) for p in paths):
        raise AceBenchDataError(f"{where}: mile_stone: expected a non-empty list of call texts, or a list of such lists")
    return tuple(tuple(p) for p in paths), several


def load_agent_category(name: str, *, root: Path = DATA_DIR, limit: int | None = None) -> list[AgentEntry]:
    """The entries of one agent category (the first `limit` when given), each paired with its ground truth."""
    if name not in AGENT_CATEGORIES:
        raise AceBenchDataError(f"unknown ACEBench agent category {name!r}; known: {', '.join(AGENT_CATEGORIES)}")
    qpath, apath = category_files(name, Path(root))
    answers = {obj["id"]: (n, obj) for n, obj in read_lines(apath)}
    rows = read_lines(qpath)
    entries = []
    for n, obj in rows[:limit] if limit is not None else rows:
        where = f"{qpath}:{n}"
        if obj["id"] not in answers:
            raise AceBenchDataError(f"{where}: id: {obj['id']!r} has no ground truth in {apath}")
        question, config, classes = obj.get("question"), obj.get("initial_config"), obj.get("involved_classes")
        if not isinstance(question, str) or not isinstance(obj.get("time", ""), str):
            raise AceBenchDataError(f"{where}: question/time: expected strings")
        if not isinstance(config, Mapping) or not all(isinstance(v, Mapping) for v in config.values()):
            raise AceBenchDataError(f"{where}: initial_config: expected {{class name: {{attribute: value}}}}")
        if not isinstance(classes, list) or not classes or not all(isinstance(c, str) for c in classes):
            raise AceBenchDataError(f"{where}: involved_classes: expected a non-empty list of class names")
        an, ans = answers[obj["id"]]
        milestones, several = _milestones(f"{apath}:{an}", ans.get("mile_stone"))
        entries.append(AgentEntry(obj["id"], name, question, config, tuple(classes), checked_functions(where, obj.get("function")),
                                  obj.get("time") or "", _truth(f"{apath}:{an}", ans.get("ground_truth")), milestones,
                                  several))
    return entries
