"""slca's agent scoring against ACEBench's own agent evaluation (docs/eval.md#acebenchs-agent-categories).

Each agent entry's milestone path is replayed as an agent's messages through slca's executor
(slca.evaluation.acebench.agent_episode.replay), as it is and perturbed: its last call or its first
dropped, its last call repeated, its first two swapped, a string argument of its last readable call
changed, another listed path, and prose instead of calls. Each episode (the messages sent to the
scenario and the end state) is scored by slca.evaluation.acebench.agent_score and by ACEBench's
eval_main.agent_eval in ACEBench's own environment (slca/evaluation/acebench/upstream.py, a
subprocess); the end-to-end verdicts and the process accuracies (to ACEBench's three places) are
compared one by one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from slca.evaluation.acebench.agent_data import AGENT_CATEGORIES, AgentEntry, load_agent_category
from slca.evaluation.acebench.agent_episode import replay
from slca.evaluation.acebench.agent_score import Episode, score_episode
from slca.evaluation.acebench.agreement import ENV_PYTHON, run_upstream
from slca.evaluation.acebench.decode import decode_agent

PROSE = "I have finished the task."


def render(name: str, args: dict) -> str:
    """One call as an agent writes it in ACEBench's format, values as Python literals."""
    return f"[{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})]"


def _changed_value(path: tuple[str, ...]) -> list[str] | None:
    # The last call that reads and has a string argument, that argument's value changed.
    for i in range(len(path) - 1, -1, -1):
        decoded = decode_agent(path[i])
        if decoded.ok and len(decoded.calls) == 1:
            name, args = decoded.calls[0]
            for key, value in args.items():
                if isinstance(value, str):
                    return [*path[:i], render(name, {**args, key: value + " (changed)"}), *path[i + 1:]]
    return None


def message_sets(entry: AgentEntry) -> dict[str, list[str]]:
    """The agent messages of each replay that applies to `entry`, by kind (gold: the first milestone path)."""
    path = entry.milestones[0]
    kinds = {"gold": list(path), "drop_last": list(path[:-1]), "drop_first": list(path[1:]),
             "repeat_last": [*path, path[-1]], "prose": [PROSE]}
    if len(path) >= 2:
        kinds["swap_first_two"] = [path[1], path[0], *path[2:]]
    changed = _changed_value(path)
    if changed is not None:
        kinds["changed_value"] = changed
    if len(entry.milestones) > 1:
        kinds["other_path"] = list(entry.milestones[1])
    return kinds


@dataclass(frozen=True)
class AgentVerdict:
    """One episode's scores from both sides: (end to end, process); ACEBench's None where its code raised."""

    category: str
    id: str
    kind: str
    slca: tuple[bool, float]
    acebench: tuple[bool, float] | None
    raised: str | None = None

    @property
    def agrees(self) -> bool:
        return self.acebench is not None and self.slca[0] == self.acebench[0] and round(self.slca[1], 3) == self.acebench[1]


@dataclass
class AgentAgreement:
    verdicts: list[AgentVerdict] = field(default_factory=list)

    @property
    def decided(self) -> list[AgentVerdict]:
        return [v for v in self.verdicts if v.acebench is not None]

    @property
    def disagreements(self) -> list[AgentVerdict]:
        return [v for v in self.decided if not v.agrees]

    def table(self) -> str:
        """Agreeing / decided episodes, and each side's end-to-end passes, per replay kind."""
        lines = [f"{'kind':16s} {'agree':>12s} {'slca e2e':>9s} {'ACEBench e2e':>13s} {'ACEBench raised':>16s}"]
        for kind in [*dict.fromkeys(v.kind for v in self.verdicts), "all"]:
            vs = [v for v in self.verdicts if kind in ("all", v.kind)]
            decided = [v for v in vs if v.acebench is not None]
            lines.append(f"{kind:16s} {sum(v.agrees for v in decided):>5d} / {len(decided):<5d} {sum(v.slca[0] for v in vs):>9d}"
                         f" {sum(bool(v.acebench and v.acebench[0]) for v in vs):>13d} {len(vs) - len(decided):>16d}")
        return "\n".join(lines)


def episodes(categories: Sequence[str] = AGENT_CATEGORIES, limit: int | None = None
             ) -> list[tuple[str, str, list[AgentEntry], list[Episode | None]]]:
    """(category, kind, entries, episode per entry or None where the kind does not apply) for every replay kind."""
    out = []
    for name in categories:
        entries = load_agent_category(name, limit=limit)
        sets = [message_sets(e) for e in entries]
        for kind in dict.fromkeys(k for s in sets for k in s):
            out.append((name, kind, entries, [replay(e, s[kind]) if kind in s else None for e, s in zip(entries, sets)]))
    return out


def compare(python: Path = ENV_PYTHON, categories: Sequence[str] = AGENT_CATEGORIES, limit: int | None = None) -> AgentAgreement:
    """Every applicable (entry, replay kind) episode scored by both sides."""
    runs = episodes(categories, limit)
    # ACEBench's batch must cover the category's first entries in order: a kind that does not apply sends the gold episode.
    gold = {(name, e.id): ep for name, kind, entries, eps in runs if kind == "gold" for e, ep in zip(entries, eps)}
    batches = [{"category": name, "model": f"slca_{kind}",
                "episodes": [{"result": [{c: attrs} for c, attrs in (ep or gold[(name, e.id)]).state],
                              "process": list((ep or gold[(name, e.id)]).process)} for e, ep in zip(entries, eps)]}
               for name, kind, entries, eps in runs]
    upstream = {(v["category"], v["model"], v["id"]): v for v in run_upstream(python, batches)}
    result = AgentAgreement()
    for name, kind, entries, eps in runs:
        for entry, ep in zip(entries, eps):
            if ep is None:
                continue
            ours = score_episode(entry, ep)
            theirs = upstream[(name, f"slca_{kind}", entry.id)]
            acebench = None if theirs["valid"] is None else (theirs["valid"], theirs["process"])
            result.verdicts.append(AgentVerdict(name, entry.id, kind, (ours.correct, ours.process), acebench, theirs["raised"]))
    return result
