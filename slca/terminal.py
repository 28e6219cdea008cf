"""Tables on the terminal, sized to its width (`COLUMNS` honoured; 120 when output is piped).

A table whose columns do not all fit keeps its leading columns and as many of the rest as fit, in
order, and is followed by one line naming those left out and the file that holds them all; a
column is never dropped without that line.

Progress bars are drawn only on a terminal: piped output (`slca run ... | cat`, a job's log) gets none,
not even the empty line a finished transient bar leaves behind.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

WIDTH_WHEN_PIPED = 120


def terminal_width() -> int:
    return shutil.get_terminal_size((WIDTH_WHEN_PIPED, 24)).columns


def progress_bar(*columns: Any, enabled: bool = True, transient: bool = True) -> Any:
    """A rich Progress over stdout, disabled (drawing and printing nothing) unless `enabled` and stdout is a terminal."""
    from rich.console import Console
    from rich.progress import Progress

    console = Console()
    return Progress(*columns, console=console, transient=transient, disable=not (enabled and console.is_terminal))


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], *, lead: int, full: Path | str,
                text_columns: int | None = None) -> list[str]:
    """Print the table; returns the names of the columns left out to fit (always after the first `lead`).

    text_columns: how many leading columns are left-aligned text (default `lead`); the rest are right-aligned.
    """
    from rich.console import Console
    from rich.measure import Measurement
    from rich.table import Table

    console = Console(width=terminal_width())
    aligned = lead if text_columns is None else text_columns

    def build(count: int) -> Table:
        table = Table(title=title)
        for i, name in enumerate(header[:count]):
            table.add_column(name, justify="left" if i < aligned else "right")
        for row in rows:
            table.add_row(*row[:count])
        return table

    def natural_width(table: Table) -> int:
        # Measured unconstrained: within the console's width rich would report the squeezed width.
        return Measurement.get(console, console.options.update_width(1 << 16), table).maximum

    count = len(header)
    table = build(count)
    # A cell rich would wrap or cut is harder to read than a column named below: drop from the end until none is.
    while count > lead and natural_width(table) > console.width:
        count -= 1
        table = build(count)
    console.print(table)
    dropped = list(header[count:])
    if dropped:
        print(f"(left out to fit {console.width} columns: {', '.join(dropped)}; {full} has every column)")
    return dropped

