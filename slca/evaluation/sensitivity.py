"""How much each protocol factor moves a metric, next to how much the seed does (docs/eval.md#sensitivity-table).

For a factor with levels L0 (its first configured level, the reference), L1, ...: each Lk is paired
with L0 in every combination of the other factors and every seed, and the paired differences
(Lk − L0) are reported as mean ± sample std over those pairs. The seed row is the within-cell std
over seeds, averaged over cells: a factor whose difference is inside it is not distinguishable
from re-running with another seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slca.evaluation.harness import FACTORS, CellResult, stats_json
from slca.rewards.metrics import MeanStd, mean_std


@dataclass(frozen=True)
class Effect:
    """One row of the table: `factor` moved from `reference` to `level`, per metric."""

    factor: str
    level: str
    reference: str
    diffs: dict[str, MeanStd]

    def as_dict(self) -> dict[str, Any]:
        return {"factor": self.factor, "level": self.level, "reference": self.reference,
                "diffs": {k: stats_json(v, "no seed in which both cells measured it") for k, v in self.diffs.items()}}


def _levels(cells: Sequence[CellResult], factor: str) -> list[str]:
    seen: dict[str, None] = {}
    for c in cells:
        seen.setdefault(c.cell.level(factor), None)
    return list(seen)


def _others(result: CellResult, factor: str) -> tuple[str, ...]:
    return tuple(result.cell.level(f) for f in FACTORS if f != factor)


def factor_effects(cells: Sequence[CellResult], metrics: Sequence[str]) -> list[Effect]:
    """Paired differences of every non-reference level of every factor with at least two levels."""
    effects = []
    for factor in FACTORS:
        levels = _levels(cells, factor)
        if len(levels) < 2:
            continue
        by_key = {(c.cell.level(factor), _others(c, factor)): c for c in cells}
        for level in levels[1:]:
            diffs: dict[str, list[float]] = {m: [] for m in metrics}
            for (lvl, others), ref in by_key.items():
                other = by_key.get((level, others)) if lvl == levels[0] else None
                if other is None:
                    continue
                for a, b in zip(ref.per_seed, other.per_seed):
                    for m in metrics:
                        if a[m] == a[m] and b[m] == b[m]:
                            diffs[m].append(b[m] - a[m])
            effects.append(Effect(factor, level, levels[0], {m: mean_std(v, ddof=1) for m, v in diffs.items()}))
    return effects


def seed_spread(cells: Sequence[CellResult], metrics: Sequence[str]) -> dict[str, MeanStd] | None:
    """Per metric: the within-cell std over seeds, mean ± std over cells; None with fewer than two seeds."""
    if not cells or len(cells[0].per_seed) < 2:
        return None
    return {m: mean_std([c.metrics[m].std for c in cells if c.metrics[m].n >= 2], ddof=1) for m in metrics}
