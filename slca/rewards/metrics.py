"""In-domain metrics from reward rows (docs/method.md#in-domain-metrics): Name F1, ArgMatch, Process, Success@t.

Over rows: mean ± population std (ddof 0). Over seeds: mean and sample std (ddof 1) of the
per-seed means, the usual way a multi-seed result is reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence


@dataclass(frozen=True)
class MeanStd:
    """A mean with its spread and sample count; `str()` gives "0.812 ± 0.013"."""

    mean: float
    std: float
    n: int

    def format(self, digits: int = 3) -> str:
        return f"{self.mean:.{digits}f} ± {self.std:.{digits}f}"

    def __str__(self) -> str:
        return self.format()


def mean_std(values: Sequence[float], ddof: int = 0) -> MeanStd:
    """Mean and std of `values`; std is 0 when fewer than ddof + 1 values; NaN mean when empty."""
    n = len(values)
    if n == 0:
        return MeanStd(math.nan, math.nan, 0)
    m = math.fsum(values) / n
    if n <= ddof:
        return MeanStd(m, 0.0, n)
    var = math.fsum((v - m) ** 2 for v in values) / (n - ddof)
    return MeanStd(m, math.sqrt(var), n)


def metric_value(row: Mapping[str, Any], metric: str) -> float:
    """One row's value of a metric: name_f1, arg_match, process, success@t, or any numeric key."""
    if metric == "name_f1":
        return float(row["name_f1"])
    if metric == "arg_match":
        return (float(row["key_score"]) + float(row["value_score"])) / 2
    if metric == "process":
        return float(row["process_score"])
    if metric.startswith("success@"):
        t = float(metric.split("@", 1)[1])
        norm = float(row["weighted_score_norm"])
        return float(norm >= (t - 1e-9 if t >= 1.0 else t))
    return float(row[metric])


def success_threshold(reward_cfg: Any) -> float:
    """The normalised reward at which a rollout counts as a success: HierR's
    `success_threshold`; exact match normalises to 0 or 1, so 1."""
    return float(getattr(reward_cfg, "success_threshold", 1.0))


def default_metrics(success_threshold: float = 0.9) -> tuple[str, ...]:
    """The four headline metrics of docs/method.md#in-domain-metrics."""
    return ("name_f1", "arg_match", "process", f"success@{float(success_threshold)}")


def aggregate_rows(rows: Iterable[Mapping[str, Any]], metrics: Sequence[str] | None = None) -> dict[str, MeanStd]:
    """Mean ± std over rows for each metric; rows with `reward_error` set are still counted
    (they score 0, as they would in training)."""
    rows = list(rows)
    metrics = metrics or default_metrics()
    return {m: mean_std([metric_value(r, m) for r in rows]) for m in metrics}


def aggregate_seeds(per_seed_rows: Sequence[Iterable[Mapping[str, Any]]], metrics: Sequence[str] | None = None) -> dict[str, MeanStd]:
    """Mean and sample std of the per-seed means; `n` is the number of seeds."""
    metrics = metrics or default_metrics()
    per_seed = [aggregate_rows(rows, metrics) for rows in per_seed_rows]
    return {m: mean_std([s[m].mean for s in per_seed], ddof=1) for m in metrics}
