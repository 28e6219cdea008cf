"""Terminal summaries of a run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # the pipeline imports this module's caller; a runtime import would be circular
    from slca.pipeline import StageOutcome


def print_outcomes(outcomes: Iterable[StageOutcome]) -> None:
    """A table of stages: status, wall time and detail."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title="slca run")
    for column in ("stage", "status", "seconds", "detail"):
        table.add_column(column)
    for outcome in outcomes:
        table.add_row(outcome.stage, outcome.status, f"{outcome.seconds:.1f}", outcome.detail)
    Console().print(table)
