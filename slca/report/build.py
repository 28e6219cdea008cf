"""Assemble the report directory: read the runs, draw every section, write index.html atomically."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from slca.fileio import atomic_directory
from slca.report.figures import SECTIONS, draw_section
from slca.report.page import GENERATOR, PageSection, render_page
from slca.report.runs import EVAL_FILES, ReportInputError, RunData, load_runs
from slca.report.series import outcome_log, retention_curve
from slca.report.tables import Table, eval_tables, fmt_number

DEFAULT_OUT = "report"  # inside the run or sweep directory


def build_report(source: Path, out: Path | None = None) -> Path:
    """Write the report of the run or sweep directory `source` into `out` (default
    `source/report`) as one directory, replaced as a whole; returns the path of its index.html."""
    source = Path(source)
    runs = load_runs(source)
    out = Path(out) if out is not None else source / DEFAULT_OUT
    _check_out(out, source)
    with atomic_directory(out) as tmp:
        sections = [_runs_section(runs)]
        for section in SECTIONS:
            drawn = draw_section(section, runs, tmp)
            page = PageSection(section.anchor, section.title, section.caption)
            if drawn.image is None:
                page.nodata = f"No data: no run logged {', '.join(p.source for p in drawn.missing)}."
            else:
                page.image = drawn.image.relative_to(tmp)
                page.missing = [f"{p.title} ({p.source})" for p in drawn.missing]
            if section.anchor == "stability":
                page.tables = _stability_tables(runs)
            sections.append(page)
        sections.append(_eval_section(runs))
        title = f"slca report: {runs[0].label}" if len(runs) == 1 and runs[0].path == source else f"slca report: {source.name} ({len(runs)} runs)"
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        meta = f"{len(runs)} run{'s' * (len(runs) != 1)} from {source} · written {stamp}"
        (tmp / "index.html").write_text(render_page(title, meta, sections, tmp), encoding="utf-8")
    return out / "index.html"


def _check_out(out: Path, source: Path) -> None:
    """The output directory is replaced as a whole: refuse anything that is not ours to replace."""
    resolved, src = out.resolve(), source.resolve()
    if resolved == src or resolved in src.parents:
        raise ReportInputError(f"--out {out}: would replace the directory being reported on ({source})")
    if out.exists() and not out.is_dir():
        raise ReportInputError(f"--out {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not _is_report(out):
        raise ReportInputError(f"--out {out}: exists and is not a report written by `slca report`; choose another --out")


def _is_report(path: Path) -> bool:
    index = path / "index.html"
    try:
        return index.is_file() and f'<meta name="generator" content="{GENERATOR}">' in index.read_text(encoding="utf-8")[:2000]
    except (OSError, UnicodeDecodeError):
        return False


def _runs_section(runs: list[RunData]) -> PageSection:
    table = Table("", ["run", "experiment", "estimator", "filter", "downsample", "backend", "seed", "RL steps", "directory"])
    for run in runs:
        names = run.names()
        steps = {r["step"] for r in run.records if r["stage"] == "rl"}
        table.rows.append([run.label, *names.values(), str(len(steps)), str(run.path)])
    return PageSection("runs", "Runs", "", tables=[table])


def _stability_tables(runs: list[RunData]) -> list[Table]:
    table = Table("pooled over epochs", ["run", "k", "epoch pairs", "prompts followed", "stayed all-correct"])
    for run in runs:
        log = outcome_log(run.records)
        for k in (1, 2):
            curve = retention_curve(log, k)
            followed = sum(curve.n)
            if followed:
                table.rows.append([run.label, str(k), str(len(curve.epochs)), str(followed), fmt_number(curve.pooled)])
    return [table] if table.rows else []


def _eval_section(runs: list[RunData]) -> PageSection:
    tables = eval_tables(runs)
    page = PageSection(
        "eval",
        "Evaluation",
        "Each protocol cell (template / thinking / system prompt) with mean ± std over seeds; a "
        "single seed is shown as one run. The sensitivity table, where the evaluation computed one, "
        "gives for each factor the difference between its levels; the protocol table is the card "
        "every result carries.",
        tables=tables,
    )
    if not tables:
        page.nodata = f"No evaluation results: no run holds {', '.join(EVAL_FILES)} with metrics."
    return page
