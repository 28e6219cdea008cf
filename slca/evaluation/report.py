"""Evaluation outputs: results.json (every number with its card) and table.md, plus the terminal table.

Formatting rule: a value over one seed is one run and prints as a plain number; over several
seeds it prints as mean ± std and the header says how many.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from slca.fileio import atomic_write_text
from slca.rewards.metrics import MeanStd


def fmt(value: MeanStd, digits: int = 3) -> str:
    """"0.812" for one run, "0.812 ± 0.013" for several, "n/a" when nothing was measured."""
    if value.n == 0 or value.mean != value.mean:
        return "n/a"
    return f"{value.mean:.{digits}f}" if value.n == 1 else value.format(digits)


def fmt_diff(value: MeanStd, digits: int = 3) -> str:
    if value.n == 0 or value.mean != value.mean:
        return "n/a"
    text = f"{value.mean:+.{digits}f}"
    return text if value.n == 1 else f"{text} ± {value.std:.{digits}f}"


def _seeds_phrase(results: Sequence[Any]) -> str:
    used = results[0].card.seeds.used if results else ()
    return "one run (1 seed)" if len(used) == 1 else f"mean ± std over {len(used)} seeds {list(used)}"


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def cell_rows(results: Sequence[Any]) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the per-cell table: one row per (protocol, metric), one column per model."""
    header = ["protocol", "metric", *(r.label for r in results)]
    rows = []
    first = results[0]
    for i, cell in enumerate(first.cells):
        for metric in first.headline:
            rows.append([cell.cell.label, metric, *(fmt(r.cells[i].metrics[metric]) for r in results)])
    return header, rows


def sensitivity_rows(result: Any, metrics: Sequence[str] | None = None) -> tuple[list[str], list[list[str]]]:
    """(header, rows): one row per factor level against its reference, then the seed spread."""
    metrics = list(metrics or result.headline)
    header = ["factor: level − reference", *metrics]
    rows = [[f"{e.factor}: {e.level} − {e.reference}", *(fmt_diff(e.diffs[m]) for m in metrics)] for e in result.effects]
    if result.seed_spread is not None:
        rows.append(["seed: std within a cell", *(fmt(result.seed_spread[m]) for m in metrics)])
    return header, rows


def table_markdown(results: Sequence[Any]) -> str:
    """table.md: the protocol, the per-cell table and each model's sensitivity table."""
    card = results[0].card
    lines = [f"# Evaluation: {card.eval_name} ({card.scoring.benchmark})", "",
             f"Values are {_seeds_phrase(results)}; decoding: temperature {card.decoding.temperature}, top_p {card.decoding.top_p}, "
             f"max_tokens {card.decoding.max_tokens}, n {card.decoding.n}. Data: {card.data.path} "
             f"({card.data.rows_evaluated} of {card.data.rows} rows, sha256 {card.data.sha256[:12]}).", ""]
    if card.data.versions:
        lines += ["Task versions: " + ", ".join(f"{k} {v}" for k, v in sorted(card.data.versions.items())), ""]
    if card.seeds.note:
        lines += [f"Note: {card.seeds.note}", ""]
    for r in results:
        lines.append(f"- {r.label}: {r.card.model.path} (weights sha256 {(r.card.model.weights_sha256 or 'none')[:12]}, {r.card.model.generator})")
    lines += ["", "## Per protocol cell", "", *_md_table(*cell_rows(results))]
    for r in results:
        if r.effects or r.seed_spread is not None:
            lines += ["", f"## Sensitivity: {r.label}", "",
                      "Paired difference of each factor level from the factor's first level, over seeds and the other factors' levels "
                      "(mean ± std over pairs); the seed row is the std over seeds within a cell, averaged over cells.", "",
                      *_md_table(*sensitivity_rows(r))]
    return "\n".join(lines) + "\n"


def write_results(out_dir: Path, results: Sequence[Any]) -> tuple[Path, Path]:
    """results.json and table.md in `out_dir`, each written atomically (the table first, the record last)."""
    from slca.evaluation.run import SCHEMA_VERSION

    table = atomic_write_text(Path(out_dir) / "table.md", table_markdown(results))
    record = atomic_write_text(Path(out_dir) / "results.json", strict_json({"schema_version": SCHEMA_VERSION, "results": [r.as_dict() for r in results]}))
    return record, table


def strict_json(obj: Any) -> str:
    """Indented JSON text of an evaluation output; ValueError on NaN or Infinity, which most JSON readers
    refuse (the as_dict forms write an unmeasured number as null with its reason)."""
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def print_tables(results: Sequence[Any], table_md: Path) -> None:
    """The per-cell table and each sensitivity table on the terminal, as many columns as fit; `table_md` has them all."""
    from slca.terminal import print_table

    print_table(f"evaluation ({_seeds_phrase(results)})", *cell_rows(results), lead=2, full=table_md)
    for r in results:
        if r.effects or r.seed_spread:
            print_table(f"sensitivity: {r.label}", *sensitivity_rows(r), lead=1, full=table_md)
