"""The data card's summary table (`slca data stats`): rows, turns per row, calls per step, tools
per row, computed in one streaming pass. A row counts only when it is valid under the split's
schema (slca.data.schemas.check_row, as for validate/convert/prepare); the rest are "unparsed"."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from slca.registry import Registry


@dataclass
class Dist:
    """Running count / mean / min / max of one per-row quantity."""

    n: int = 0
    total: float = 0.0
    lo: float | None = None
    hi: float | None = None

    def add(self, x: float) -> None:
        self.n += 1
        self.total += x
        self.lo = x if self.lo is None else min(self.lo, x)
        self.hi = x if self.hi is None else max(self.hi, x)

    def as_dict(self) -> dict[str, Any]:
        return {"mean": round(self.total / self.n, 3) if self.n else None, "min": self.lo, "max": self.hi, "n": self.n}


@dataclass
class Stats:
    split: str
    rows: int = 0
    unparsed: int = 0
    turns: Dist = field(default_factory=Dist)
    steps: Dist = field(default_factory=Dist)
    calls_per_step: Dist = field(default_factory=Dist)
    tools: Dist = field(default_factory=Dist)
    parallel_steps: int = 0
    subsets: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "rows": self.rows,
            "unparsed_rows": self.unparsed,
            "turns_per_row": self.turns.as_dict(),
            "tool_steps_per_row": self.steps.as_dict(),
            "calls_per_step": self.calls_per_step.as_dict(),
            "parallel_step_fraction": round(self.parallel_steps / self.calls_per_step.n, 4) if self.calls_per_step.n else None,
            "tools_per_row": self.tools.as_dict(),
            "subsets": dict(sorted(self.subsets.items())),
        }

    def table(self) -> str:
        d = self.as_dict()
        lines = [f"split {self.split}: {self.rows:,} rows ({self.unparsed} not parseable)"]
        for k in ("turns_per_row", "tool_steps_per_row", "calls_per_step", "tools_per_row"):
            v = d[k]
            lines.append(f"  {k:<20} mean {v['mean']}  range [{v['min']}, {v['max']}]")
        lines.append(f"  parallel_step_fraction {d['parallel_step_fraction']}")
        if self.subsets:
            lines.append("  subsets " + ", ".join(f"{k}={v:,}" for k, v in sorted(self.subsets.items())))
        return "\n".join(lines)


def _sft_shape(row: dict[str, Any], d: Any) -> tuple[int, list[list[Any]], int, str] | None:
    if d is None:  # the materialised messages/tools layout: valid, but it has no turns to count
        return None
    steps = [t.calls for t in d.turns if t.role == "assistant" and t.calls]
    return len(d.turns), steps, len(d.tools), row.get("subset_name") or "all"


def _rl_shape(row: dict[str, Any], d: Any) -> tuple[int, list[list[Any]], int, str]:
    from slca.data.schemas import gold_steps

    gt = row["reward_model"]["ground_truth"]
    return len(row["prompt"]), gold_steps(gt["gold_tool_calls"])[0], len(gt["allowed_tools"]), gt.get("subset_name") or "all"


# split -> (valid row, its parsed dialogue) -> (turns, gold/tool steps, tools offered, subset), None = not countable
SHAPES: Registry[Callable[[dict[str, Any], Any], tuple[int, list[list[Any]], int, str] | None]] = Registry("stats split")
SHAPES.register("sft")(_sft_shape)
SHAPES.register("rl")(_rl_shape)
SHAPES.register("eval")(_rl_shape)


def collect(rows: Iterable[Any], split: str) -> Stats:
    """Stats over a row stream of `split` (sft: ShareGPT conversations; rl/eval: verl rows)."""
    from slca.data.schemas import check_row

    shape_of = SHAPES[split]
    st = Stats(split)
    for idx, row in enumerate(rows):
        st.rows += 1
        d, errs = check_row(row, split, idx)
        shape = None if errs else shape_of(row, d)
        if shape is None:
            st.unparsed += 1
            continue
        n_turns, steps, n_tools, sub = shape
        st.turns.add(n_turns)
        st.tools.add(n_tools)
        st.steps.add(len(steps))
        for s in steps:
            st.calls_per_step.add(len(s))
            st.parallel_steps += len(s) > 1
        st.subsets[sub] = st.subsets.get(sub, 0) + 1
    return st
