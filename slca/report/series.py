"""Metric lines → per-step series, and the per-prompt outcome log → all-correct stability curves.

Pure functions over the parsed lines of metrics.jsonl (docs/report.md). A resumed run logs again
the steps after its last checkpoint; everywhere here the later line for a step wins, as it is the
one the continued run built on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# The local trainer's per-prompt record: [epoch, prompt id, 1 if all n rollouts succeeded else 0].
OUTCOMES_KEY = "prompts/all_correct"


@dataclass(frozen=True)
class Series:
    """y against x (a step or an epoch); NaN marks a value logged as null (non-finite)."""

    x: tuple[float, ...]
    y: tuple[float, ...]

    def __len__(self) -> int:
        return len(self.x)


def metric_series(records: Sequence[Mapping[str, Any]], key: str, stage: str = "rl") -> Series | None:
    """`key` per step over the lines of `stage`; None when no such line holds a number (or null) under `key`."""
    by_step: dict[float, float] = {}
    for record in records:
        if record.get("stage") != stage or key not in record:
            continue
        value = record[key]
        if value is None:
            by_step[record["step"]] = math.nan
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            by_step[record["step"]] = float(value)
    if not by_step:
        return None
    steps = sorted(by_step)
    return Series(tuple(steps), tuple(by_step[s] for s in steps))


def window_lift(series: Series, head: int, tail: int) -> float:
    """Mean of the last `tail` finite values minus the mean of the first `head`: how far a run moved
    a metric from where it started, averaged over windows so one noisy step does not decide it
    (docs/method.md#learning-regression-check). NaN when fewer than head + tail values are finite."""
    if head < 1 or tail < 1:
        raise ValueError(f"head and tail must be >= 1, got {head} and {tail}")
    values = [v for v in series.y if math.isfinite(v)]
    if len(values) < head + tail:
        return math.nan
    return sum(values[-tail:]) / tail - sum(values[:head]) / head


def step_outcomes(records: Sequence[Mapping[str, Any]], stage: str = "rl") -> dict[float, list[tuple[int, Any, bool]]]:
    """step -> [(epoch, prompt id, all rollouts correct)] from the lines that carry the outcome log."""
    by_step: dict[float, list[tuple[int, Any, bool]]] = {}
    for record in records:
        entries = record.get(OUTCOMES_KEY)
        if record.get("stage") != stage or not isinstance(entries, list):
            continue
        parsed = []
        for entry in entries:
            # A malformed entry is skipped rather than refused: the log is diagnostic, the rest of the line is not.
            if isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], int) and entry[2] in (0, 1):
                parsed.append((entry[0], entry[1], bool(entry[2])))
        by_step[record["step"]] = parsed
    return by_step


def all_correct_fraction(records: Sequence[Mapping[str, Any]], stage: str = "rl") -> Series | None:
    """Per step, the share of the prompts rolled out whose n rollouts were all correct."""
    by_step = {s: o for s, o in step_outcomes(records, stage).items() if o}
    if not by_step:
        return None
    steps = sorted(by_step)
    return Series(tuple(steps), tuple(sum(ok for _, _, ok in by_step[s]) / len(by_step[s]) for s in steps))


def outcome_log(records: Sequence[Mapping[str, Any]], stage: str = "rl") -> dict[int, dict[Any, bool]]:
    """epoch -> {prompt id: all correct}; a prompt rolled out twice in one epoch counts as
    all-correct only if it was both times."""
    log: dict[int, dict[Any, bool]] = {}
    for _, entries in sorted(step_outcomes(records, stage).items()):
        for epoch, pid, ok in entries:
            epoch_log = log.setdefault(epoch, {})
            epoch_log[pid] = epoch_log.get(pid, True) and ok
    return log


@dataclass(frozen=True)
class Retention:
    """The stability curve for one k: per epoch e, of the prompts all-correct in e that were
    rolled out again in each of the next k epochs (`n`), the share all-correct in all of them (`p`,
    None where n = 0); `pooled` over every e."""

    k: int
    epochs: tuple[int, ...]
    n: tuple[int, ...]
    p: tuple[float | None, ...]
    pooled: float | None


def retention_curve(log: Mapping[int, Mapping[Any, bool]], k: int) -> Retention:
    """The efficiency paper's Fig. 5 for one k, from `outcome_log` (docs/report.md#all-correct-stability).

    Only epochs e with epochs e+1..e+k in the log are counted. A prompt not rolled out in one
    of those epochs (skipped by a pre-rollout filter, or training ended first) says nothing
    about stability and is left out, so under a k=1 filter the curve is empty by design.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    epochs, ns, ps = [], [], []
    stayed_all = n_all = 0
    for e in sorted(log):
        following = [log.get(e + j) for j in range(1, k + 1)]
        if any(f is None for f in following):
            continue
        n = stayed = 0
        for pid, ok in log[e].items():
            if not ok or not all(pid in f for f in following):  # type: ignore[operator]
                continue
            n += 1
            stayed += all(f[pid] for f in following)  # type: ignore[index]
        epochs.append(e)
        ns.append(n)
        ps.append(stayed / n if n else None)
        stayed_all += stayed
        n_all += n
    return Retention(k, tuple(epochs), tuple(ns), tuple(ps), stayed_all / n_all if n_all else None)
