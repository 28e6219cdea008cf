"""Find the run directories under a path and read what a report needs from each.

A run directory is recognised by its `spec.yaml`; a sweep is any directory with run directories
below it. Nothing here validates a spec against the current config models: a report of an older
run must still render, so the spec is read as plain YAML and only a few names are taken from it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from slca.safe_yaml import load_yaml

# Where evaluation results live in a run directory: the pipeline's eval stage, and `slca eval`.
EVAL_FILES = ("eval/report.json", "eval/results.json", "results.json")


class ReportInputError(ValueError):
    """A report input the user has to fix; the message is one line naming the file (and line)."""


@dataclass
class RunData:
    """What one run directory holds for the report."""

    label: str
    path: Path
    spec: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)  # metrics.jsonl lines, in order
    evals: dict[str, dict[str, Any]] = field(default_factory=dict)  # relative file -> parsed JSON

    def names(self) -> dict[str, str]:
        """The few spec names shown in the runs table ("?" where the spec does not say)."""

        def pick(*keys: str) -> str:
            node: Any = self.spec
            for key in keys:
                node = node.get(key) if isinstance(node, dict) else None
            return "?" if node is None else str(node)

        return {
            "experiment": pick("experiment"),
            "estimator": pick("estimator", "name"),
            "filter": pick("filter", "name"),
            "downsample": pick("downsample", "name"),
            "backend": pick("backend", "name"),
            "seed": pick("run", "seed"),
        }


def find_run_dirs(root: Path) -> list[Path]:
    """`root` itself when it holds spec.yaml, else every run directory below it (sorted); the
    search does not descend into a run directory, nor into hidden (temporary) folders."""
    if (root / "spec.yaml").is_file():
        return [root]
    found: list[Path] = []
    for child in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        found += find_run_dirs(child)
    return found


def load_runs(source: Path) -> list[RunData]:
    """Every run under `source`, labelled by its path relative to `source` (a lone run by its name)."""
    if not source.exists():
        raise ReportInputError(f"{source}: no such directory")
    if not source.is_dir():
        raise ReportInputError(f"{source}: not a directory (give a run directory or a sweep directory)")
    dirs = find_run_dirs(source)
    if not dirs:
        raise ReportInputError(f"{source}: no run directory (a folder with spec.yaml) in or below it")
    return [load_run(d, label) for d, label in zip(dirs, run_labels(dirs, source))]


def run_labels(dirs: list[Path], source: Path) -> list[str]:
    """Each run's path below `source`, without the folders all of them share (a sweep's `runs/`);
    a lone run is labelled by its own name."""
    parts = [d.relative_to(source).parts for d in dirs]
    shared = 0
    while all(len(p) > shared + 1 and p[shared] == parts[0][shared] for p in parts):
        shared += 1
    return ["/".join(p[shared:]) or d.name for d, p in zip(dirs, parts)]


def load_run(path: Path, label: str) -> RunData:
    run = RunData(label=label, path=path, spec=_read_spec(path / "spec.yaml"))
    run.records = read_metrics(path / "metrics.jsonl")
    for name in EVAL_FILES:
        if (path / name).is_file():
            run.evals[name] = _read_json(path / name)
    return run


def _read_mapping(path: Path, parse: Any, errors: tuple[type[BaseException], ...], unreadable: str, not_mapping: str) -> dict[str, Any]:
    """`path` parsed with `parse`; a read or parse failure, or a value that is not a mapping
    (`not_mapping` with {got}: its type), is one ReportInputError line naming the file."""
    try:
        value = parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, *errors) as exc:
        raise ReportInputError(f"{path}: {unreadable} ({_first_line(exc)})") from None
    if not isinstance(value, dict):
        raise ReportInputError(f"{path}: " + not_mapping.format(got=type(value).__name__))
    return value


def _read_spec(path: Path) -> dict[str, Any]:
    return _read_mapping(path, load_yaml, (yaml.YAMLError,), "unreadable spec", "not a spec (a YAML mapping expected, got {got})")


def _read_json(path: Path) -> dict[str, Any]:
    return _read_mapping(path, json.loads, (json.JSONDecodeError,), "unreadable JSON", "a JSON object expected, got {got}")


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """The lines of metrics.jsonl; [] when the run has none yet.

    A last line without its newline is a write in progress (or torn by a kill) and is left out,
    as the tracker itself drops it; any other line that is not a JSON object with a numeric
    `step` and a string `stage` is refused, naming the file and line.
    """
    if not path.is_file():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{path}: unreadable ({_first_line(exc)})") from None
    lines = text.split("\n")
    complete = lines[:-1]  # the part after the last newline is '' or a line still being written
    records = []
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReportInputError(f"{path} line {number}: not JSON ({_first_line(exc)})") from None
        if not isinstance(record, dict):
            raise ReportInputError(f"{path} line {number}: a JSON object expected, got {type(record).__name__}")
        step, stage = record.get("step"), record.get("stage")
        if isinstance(step, bool) or not isinstance(step, (int, float)) or not math.isfinite(step):
            raise ReportInputError(f"{path} line {number}: field 'step' must be a number, got {step!r}")
        if not isinstance(stage, str):
            raise ReportInputError(f"{path} line {number}: field 'stage' must be a string, got {stage!r}")
        records.append(record)
    return records


def _first_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__
