"""Evaluation results → plain tables (header + rows of strings), rendered to HTML by `page`.

Reads the evaluation files a run directory holds (docs/eval.md): `results.json` of schema 1
(`{"results": [{"card", "headline", "cells", "sensitivity": {"effects", "seed_spread"}}]}`, one
entry per evaluated model) and the older `eval/report.json` (`{"protocol", "models": {label:
cells}}`). Every part is optional: a file without one contributes no rows, and values of an
unexpected shape are shown as text rather than refused.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from slca.report.runs import RunData


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""


@dataclass
class ModelEval:
    """One evaluated model of one file, whichever schema it came in."""

    run: str
    label: str
    cells: list[Mapping[str, Any]]
    card: Mapping[str, Any] | None
    effects: list[Mapping[str, Any]]
    seed_spread: Mapping[str, Any] | None
    headline: list[str]


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _as_map(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def model_evals(run: RunData, name: str) -> list[ModelEval]:
    doc = run.evals.get(name, {})
    found = []
    for i, entry in enumerate(_as_list(doc.get("results"))):
        if not isinstance(entry, Mapping):
            continue
        card = _as_map(entry.get("card"))
        model = _as_map(card.get("model")) if card else None
        label = str(model.get("label")) if model and model.get("label") is not None else f"model {i + 1}"
        sens = _as_map(entry.get("sensitivity")) or {}
        found.append(ModelEval(run.label, label, [c for c in _as_list(entry.get("cells")) if isinstance(c, Mapping)], card,
                               [e for e in _as_list(sens.get("effects")) if isinstance(e, Mapping)], _as_map(sens.get("seed_spread")),
                               [str(h) for h in _as_list(entry.get("headline"))]))
    models = _as_map(doc.get("models"))
    for label, cells in (models or {}).items():
        found.append(ModelEval(run.label, str(label), [c for c in _as_list(cells) if isinstance(c, Mapping)],
                               _as_map(doc.get("protocol")), [], None, []))
    return found


def fmt_number(value: Any, signed: bool = False) -> str:
    """3 decimals; integral values (row counts) without any."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return fmt_value(value)
    if not math.isfinite(value):
        return "n/a"
    if float(value).is_integer() and abs(value) >= 1 and not signed:
        return f"{value:.0f}"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def fmt_stats(stats: Mapping[str, Any], signed: bool = False) -> str:
    """A {mean, std, n} value: one run prints as a plain number, several as `mean ± std`."""
    mean, std, n = stats.get("mean"), stats.get("std"), stats.get("n")
    if n == 0 or not isinstance(mean, (int, float)) or (isinstance(mean, float) and not math.isfinite(mean)):
        return "n/a"
    if n == 1 or not isinstance(std, (int, float)):
        return fmt_number(mean, signed)
    return f"{fmt_number(mean, signed)} ± {fmt_number(std)}"


def fmt_value(value: Any) -> str:
    if isinstance(value, Mapping) and "mean" in value:
        return fmt_stats(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return fmt_number(value)
    if value is None:
        return ""
    if isinstance(value, str):
        # A sha256 in full only widens the table; its first 12 hex digits identify it.
        return f"{value[:12]}…" if len(value) == 64 and all(c in "0123456789abcdef" for c in value) else value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _seed_counts(models: Sequence[ModelEval]) -> set[Any]:
    return {s.get("n") for m in models for c in m.cells for s in (_as_map(c.get("metrics")) or {}).values() if isinstance(s, Mapping)}


def _cells_table(name: str, models: Sequence[ModelEval], with_run: bool) -> Table | None:
    metrics: list[str] = []
    for m in models:
        metrics += [h for h in m.headline if h not in metrics]
    body = []
    for m in models:
        for cell in m.cells:
            values = _as_map(cell.get("metrics")) or {}
            metrics += [k for k in values if k not in metrics]
            protocol = cell.get("protocol")
            where = " / ".join(fmt_value(v) for v in protocol.values()) if isinstance(protocol, Mapping) else fmt_value(protocol)
            body.append(([m.run] * with_run + [m.label, where], values))
    if not body:
        return None
    header = ["run"] * with_run + ["model", "protocol", *metrics]
    rows = [lead + [fmt_value(values.get(k)) for k in metrics] for lead, values in body]
    counts = _seed_counts(models)
    if counts == {1}:
        return Table(f"{name}: metrics per protocol cell", header, rows, note="One seed: every value is a single run (no spread to report).")
    seeds = "/".join(str(n) for n in sorted(c for c in counts if isinstance(c, int)))
    return Table(f"{name}: metrics per protocol cell, mean ± std over {seeds} seeds", header, rows)


def _sensitivity_table(name: str, models: Sequence[ModelEval], with_run: bool) -> Table | None:
    metrics: list[str] = []
    for m in models:
        metrics += [h for h in m.headline if h not in metrics]
        for effect in m.effects:
            metrics += [k for k in (_as_map(effect.get("diffs")) or {}) if k not in metrics]
    rows = []
    for m in models:
        lead = [m.run] * with_run + [m.label]
        for effect in m.effects:
            diffs = _as_map(effect.get("diffs")) or {}
            level = f"{fmt_value(effect.get('level'))} − {fmt_value(effect.get('reference'))}"
            rows.append(lead + [fmt_value(effect.get("factor")), level,
                                *(fmt_stats(diffs[k], signed=True) if isinstance(diffs.get(k), Mapping) else fmt_value(diffs.get(k)) for k in metrics)])
        if m.seed_spread:
            rows.append(lead + ["seed", "std within a cell", *(fmt_value(m.seed_spread.get(k)) for k in metrics)])
    if not rows:
        return None
    return Table(f"{name}: sensitivity", ["run"] * with_run + ["model", "factor", "level − reference", *metrics], rows,
                 note="Paired difference of each factor level from the factor's first level, mean ± std over seeds and the "
                      "other factors' levels; the seed row is the std over seeds within a cell, averaged over cells.")


def _card_table(name: str, models: Sequence[ModelEval], with_run: bool) -> Table | None:
    cards = [(m, _flatten(m.card)) for m in models if m.card]
    if not cards:
        return None
    keys: list[str] = []
    for _, card in cards:
        keys += [k for k in card if k not in keys]
    header = ["field", *((f"{m.run}: {m.label}" if with_run else m.label) for m, _ in cards)]
    return Table(f"{name}: protocol card", header, [[key, *(fmt_value(card.get(key)) for _, card in cards)] for key in keys])


def _flatten(node: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in node.items():
        if key == "packages" and isinstance(value, Mapping):  # dozens of versions: the commit already pins them
            flat[f"{prefix}{key}"] = f"{len(value)} package versions recorded"
        elif isinstance(value, Mapping) and value and "mean" not in value:
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def eval_tables(runs: Sequence[RunData]) -> list[Table]:
    """The metrics, sensitivity and protocol-card tables of every evaluation file the runs hold."""
    names: list[str] = []
    for run in runs:
        names += [n for n in run.evals if n not in names]
    with_run = len(runs) > 1
    tables = []
    for name in names:
        models = [m for run in runs for m in model_evals(run, name)]
        for build in (_cells_table, _sensitivity_table, _card_table):
            table = build(name, models, with_run)
            if table is not None:
                tables.append(table)
    return tables
