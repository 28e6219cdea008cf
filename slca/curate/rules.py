"""Pure decisions of curation: structural checks, keep modes, the funnel and histogram.

A prompt is dropped for the first reason that applies, in the order of `REASONS`; the funnel
reconciles: rows in = kept + the sum of the per-reason drops (docs/method.md#offline-prompt-curation).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

from slca.data.schemas import gold_steps
from slca.registry import Registry

# Every reason a prompt can be dropped, in the order they are checked.
REASONS: tuple[str, ...] = ("invalid_row", "turns", "gold_calls", "prompt_too_long", "unrenderable", "all_correct", "all_wrong")

# keep mode -> (successes, rollouts) -> the drop reason, or None to keep the prompt.
KeepRule = Callable[[int, int], "str | None"]
KEEP_MODES: Registry[KeepRule] = Registry("keep mode")


@KEEP_MODES.register("mixed")
def _mixed(successes: int, rollouts: int) -> str | None:
    """Efficiency paper, single-turn curation: only rollouts that disagree carry a learning signal."""
    return _not_all_correct(successes, rollouts) or _not_all_wrong(successes, rollouts)


@KEEP_MODES.register("not_all_correct")
def _not_all_correct(successes: int, rollouts: int) -> str | None:
    """Efficiency paper, section 3.5: drop what the policy already always solves."""
    return "all_correct" if successes == rollouts else None


@KEEP_MODES.register("not_all_wrong")
def _not_all_wrong(successes: int, rollouts: int) -> str | None:
    """Efficiency paper, multi-turn curation: drop what k rollouts of a (stronger) policy never solve."""
    return "all_wrong" if successes == 0 else None


def dialogue_turns(row: Mapping[str, Any]) -> int:
    """User and assistant messages of the prompt (system and tool messages are not turns)."""
    prompt = row.get("prompt")
    prompt = prompt.tolist() if hasattr(prompt, "tolist") else prompt
    return sum(1 for m in prompt or () if isinstance(m, Mapping) and m.get("role") in ("user", "assistant"))


def gold_call_count(row: Mapping[str, Any]) -> int:
    """Calls the gold answer makes, over all its steps (0 for a prompt that needs none)."""
    steps, _ = gold_steps(row["reward_model"]["ground_truth"]["gold_tool_calls"])
    return sum(len(step) for step in steps)


def structural_reason(row: Mapping[str, Any], min_turns: int | None, max_turns: int | None, max_gold_calls: int | None) -> str | None:
    """Why a validated RL row is dropped before any rollout, or None."""
    if min_turns is not None or max_turns is not None:
        turns = dialogue_turns(row)
        if turns < (min_turns or 0) or (max_turns is not None and turns > max_turns):
            return "turns"
    if max_gold_calls is not None and gold_call_count(row) > max_gold_calls:
        return "gold_calls"
    return None


def pass_rate_histogram(successes: list[int], rollouts: int) -> dict[str, int]:
    """Rolled-out prompts per success count, "s/k" for s = 0..k (every bin present)."""
    counts = [0] * (rollouts + 1)
    for s in successes:
        counts[s] += 1
    return {f"{s}/{rollouts}": n for s, n in enumerate(counts)}


@dataclass
class CurateFunnel:
    """What happened to every input row; `check` proves the counts reconcile."""

    rows_in: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=lambda: {r: 0 for r in REASONS})
    rolled_out: int = 0
    rollouts_per_prompt: int = 0
    keep: str = ""
    generator_calls: int = 0
    cached_batches: int = 0
    seconds: float = 0.0
    histogram: dict[str, int] = field(default_factory=dict)
    # Input row index -> successes of its rollouts (rows dropped before rollouts are absent).
    successes: dict[int, int] = field(default_factory=dict)

    def check(self) -> None:
        """Raise ValueError when the counts do not add up (a bug, never a data problem)."""
        if self.rows_in != self.kept + sum(self.dropped.values()):
            raise ValueError(f"curate funnel does not reconcile: {self.rows_in} in != {self.kept} kept + {self.dropped}")
        if self.rolled_out != len(self.successes) or self.rolled_out != sum(self.histogram.values()):
            raise ValueError(f"curate funnel: {self.rolled_out} rolled out, {len(self.successes)} outcomes, histogram {self.histogram}")

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["successes"] = {str(k): v for k, v in sorted(self.successes.items())}
        return out

    def table(self) -> str:
        lines = [f"{'rows in':>26}  {self.rows_in:>9,}", f"{'kept':>26}  {self.kept:>9,}"]
        lines += [f"{'dropped: ' + r:>26}  {n:>9,}" for r, n in self.dropped.items()]
        lines += [f"{'pass rate ' + b:>26}  {n:>9,}" for b, n in self.histogram.items()]
        lines.append(f"{'generator calls':>26}  {self.generator_calls:>9,}")
        return "\n".join(lines)
