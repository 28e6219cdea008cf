"""Evaluation reports: a JSON file carrying its protocol, and a side-by-side terminal table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slca.config.spec import Spec
from slca.fileio import atomic_write_json


def write_report(path: Path, spec: Spec, results: dict[str, list[Any]]) -> Path:
    """Every number with its protocol: seeds, decoding, model, reward and the factor grid."""
    from slca.evaluation.harness import hierr_config

    report = {
        "experiment": spec.experiment,
        "description": spec.description,
        "protocol": {
            "seeds": list(spec.eval.seeds),
            "temperature": spec.eval.temperature,
            "top_p": spec.eval.top_p,
            "success_threshold": hierr_config(spec.reward).success_threshold,
            "eval": spec.eval.name,
            "generator": spec.eval.generator,
            "max_samples": spec.eval.max_samples,
            "backbone": spec.backbone.name,
            "reward": spec.reward.name,
            "simulator": spec.simulator.name,
            "data": spec.data.name,
        },
        "models": {label: [cell.as_dict() for cell in cells] for label, cells in results.items()},
    }
    return atomic_write_json(path, report)


def print_comparison(results: dict[str, list[Any]]) -> None:
    """One row per (protocol, metric), one column per evaluated model: mean ± std over seeds."""
    from rich.console import Console
    from rich.table import Table

    from slca.evaluation.harness import HEADLINE

    labels = list(results)
    table = Table(title="evaluation (mean ± std over seeds)")
    table.add_column("protocol")
    table.add_column("metric")
    for label in labels:
        table.add_column(label, justify="right")
    n_cells = len(next(iter(results.values()))) if results else 0
    for i in range(n_cells):
        cell = results[labels[0]][i].cell
        for metric in HEADLINE:
            table.add_row(cell.label, metric, *(results[label][i].metrics[metric].format() for label in labels))
    Console().print(table)
