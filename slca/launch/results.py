"""`slca results SWEEP_DIR`: every run's final metrics in one table (docs/launch.md#results).

Rows are the sweep's grid points with the seed keys averaged out: for each (group, metric), the mean
± sample standard deviation (n − 1) over the finished runs of that group, and n. Final metrics are
the numbers of the run's `summary` lines in metrics.jsonl (its last evaluation). Runs that did not
finish are listed under the table, never dropped: failed and missing ones with their error line and
log path, runs still going with their job state.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from slca.fileio import atomic_write_text
from slca.launch.base import SweepError
from slca.launch.grid import override_value
from slca.launch.status import FINISHED, RunStatus
from slca.launch.sweep import SWEEP, read_manifest, statuses

DEFAULT_EXCLUDE = ("*/rows", "*/skipped_rows")  # counts, not results


@dataclass
class Row:
    group: dict[str, str]
    metric: str
    values: list[float] = field(default_factory=list)

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values)

    @property
    def std(self) -> float | None:
        if len(self.values) < 2:
            return None
        m = self.mean
        return math.sqrt(sum((v - m) ** 2 for v in self.values) / (len(self.values) - 1))

    def cell(self) -> str:
        std = self.std
        return f"{self.mean:.4f} ± {std:.4f}" if std is not None else f"{self.mean:.4f}"


@dataclass
class Table:
    group_keys: list[str]
    rows: list[Row]
    unfinished: dict[str, RunStatus]
    seed_keys: list[str]


def final_metrics(run_dir: Path) -> dict[str, float]:
    """The numbers of the run's `summary` lines (later lines win); torn or foreign lines are skipped."""
    out: dict[str, float] = {}
    try:
        text = (run_dir / "metrics.jsonl").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return out
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("stage") == "summary":
            out.update({k: float(v) for k, v in record.items()
                        if k not in ("stage", "step", "time") and isinstance(v, (int, float)) and not isinstance(v, bool)})
    return out


def collect(sweep_dir: Path, patterns: list[str] | None = None) -> Table:
    """The results table of a sweep directory; metrics restricted to `patterns` (fnmatch) when given."""
    sweep_dir = Path(sweep_dir)
    if not (sweep_dir / "manifest.json").is_file():
        raise SweepError(f"{sweep_dir}: not a sweep directory (no manifest.json); give the directory `slca sweep` printed")
    manifest = read_manifest(sweep_dir)
    try:
        asked = json.loads((sweep_dir / SWEEP).read_text(encoding="utf-8"))
        seed_keys = list(asked.get("seed_keys", []))
        grid_keys = list(asked["grid"])
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        raise SweepError(f"{sweep_dir / SWEEP} is missing or unreadable; run the sweep command again to rewrite it") from None
    group_keys = [k for k in grid_keys if k not in seed_keys]
    states = statuses(sweep_dir, manifest)
    rows: dict[tuple[tuple[str, ...], str], Row] = {}
    unfinished = {}
    for key, entry in manifest["runs"].items():
        status = states[key]
        if status.state != FINISHED:
            unfinished[key] = status
            continue
        point = entry.get("point", {})
        group = {k: override_value(point[k]) if k in point else "?" for k in group_keys}
        for metric, value in final_metrics(Path(entry["run_dir"])).items():
            if patterns and not any(fnmatch.fnmatch(metric, p) for p in patterns):
                continue
            if not patterns and any(fnmatch.fnmatch(metric, p) for p in DEFAULT_EXCLUDE):
                continue
            rows.setdefault((tuple(group.values()), metric), Row(group, metric)).values.append(value)
    ordered = [rows[k] for k in sorted(rows, key=lambda k: (k[1], k[0]))]
    return Table(group_keys, ordered, unfinished, seed_keys)


def to_csv(table: Table) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*table.group_keys, "metric", "mean", "std", "n"])
    for row in table.rows:
        std = row.std
        writer.writerow([*row.group.values(), row.metric, repr(row.mean), "" if std is None else repr(std), len(row.values)])
    return buffer.getvalue()


def to_markdown(table: Table) -> str:
    seeds = f" (mean ± std over {', '.join(table.seed_keys)})" if table.seed_keys else ""
    head = [*table.group_keys, "metric", f"value{seeds}", "n"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join([*row.group.values(), row.metric, row.cell(), str(len(row.values))]) + " |" for row in table.rows]
    if table.unfinished:
        lines += ["", "| run | state | error | log |", "|---|---|---|---|"]
        for key, status in sorted(table.unfinished.items()):
            lines.append(f"| {key} | {status.state} | {status.error.replace('|', '/')} | {status.log} |")
    return "\n".join(lines) + "\n"


def print_table(table: Table) -> None:
    from rich.console import Console
    from rich.table import Table as RichTable

    from slca.terminal import terminal_width

    console = Console(width=terminal_width())  # too wide, cells wrap; results.md has the same table unwrapped
    seeds = f" over {', '.join(table.seed_keys)}" if table.seed_keys else ""
    results = RichTable(title=f"final metrics (mean ± std{seeds})")
    for column in [*table.group_keys, "metric", "value", "n"]:
        results.add_column(column)
    for row in table.rows:
        results.add_row(*row.group.values(), row.metric, row.cell(), str(len(row.values)))
    console.print(results)
    if table.unfinished:
        # One line per run, never folded: a run's name and its error are what a user copies from here.
        console.print("runs without results:")
        for key, status in sorted(table.unfinished.items()):
            error = f": {status.error}" if status.error else ""
            log = f" (log {status.log})" if status.log else ""
            console.print(f"  {key} {status.state}{error}{log}", soft_wrap=True, markup=False, highlight=False)


def write_results(sweep_dir: Path, patterns: list[str] | None = None) -> tuple[Table, Path, Path]:
    """Collect, write results.csv and results.md into the sweep directory (atomically), return them."""
    table = collect(sweep_dir, patterns)
    csv_path = atomic_write_text(Path(sweep_dir) / "results.csv", to_csv(table))
    md_path = atomic_write_text(Path(sweep_dir) / "results.md", to_markdown(table))
    return table, csv_path, md_path
