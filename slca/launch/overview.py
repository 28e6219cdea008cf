"""`slca status` and `slca runs`: one view per run, read from its directory and its scheduler, never
from memory (docs/launch.md#operating-runs).

Each run's view joins what was submitted (its sweep's manifest entry, or `submission.json` of a run
submitted on its own), its job record (`job.json`: attempts, outcome, cancellation), its progress
(the last line of `metrics.jsonl`: stage, step, a headline metric) and what its launcher says of its
job now (one scheduler query per launcher for all the runs shown: SLURM's `squeue`, the local
launcher's run locks). The state vocabulary is `slca.launch.status`'s.
"""

from __future__ import annotations

import fnmatch
import json
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from slca.launch import lookup
from slca.launch.base import SweepError, get_launcher
from slca.launch.grid import override_value
from slca.launch.job import read_record
from slca.launch.status import FINISHED, MISSING, STALE, RunStatus, run_status

UNKNOWN = "unknown"  # the launcher's scheduler could not be asked

# Which number of a metrics line is its headline, in order of preference; else its first number.
HEADLINE = ("eval/*/success", "eval/success", "reward/score_mean", "critic/score/mean", "val-core/*", "loss", "train/loss", "*loss*")
NOT_METRICS = ("stage", "step", "time", "epoch", "lr")
TAIL_BYTES = 65536


@dataclass(frozen=True)
class Progress:
    """The run's last metrics line: stage, step, its headline metric and when it was logged (epoch s)."""

    stage: str
    step: int | None
    metric: str
    value: float | None
    time: float | None


@dataclass(frozen=True)
class Target:
    """One run to show, before the scheduler is asked: where it is and what was submitted for it."""

    run_dir: Path
    name: str
    sweep: str
    launcher: str
    overrides: list[str]
    job_id: str | None
    array_index: int | None
    log: str


@dataclass(frozen=True)
class RunView:
    """One row of `slca status` (and of `--json`)."""

    run: str
    sweep: str
    run_dir: str
    experiment: str
    overrides: list[str]
    launcher: str
    job_id: str | None
    array_index: int | None
    state: str
    requeues: int
    detail: str
    stage: str
    step: int | None
    metric: str
    value: float | None
    wall_s: float | None
    log: str
    created: str
    attempts: int = 0


def headline(record: dict[str, Any]) -> tuple[str, float | None]:
    """(name, value) of a metrics line's headline number; ("", None) when it has none."""
    numbers = {k: v for k, v in record.items() if k not in NOT_METRICS and isinstance(v, (int, float)) and not isinstance(v, bool)}
    for pattern in HEADLINE:
        for name in numbers:
            if fnmatch.fnmatch(name, pattern):
                return name, float(numbers[name])
    first = next(iter(numbers), None)
    return (first, float(numbers[first])) if first is not None else ("", None)


def progress(run_dir: Path) -> Progress | None:
    """The last complete line of the run's metrics.jsonl (its tail only: it can be large)."""
    try:
        with open(run_dir / "metrics.jsonl", "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - TAIL_BYTES))
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue  # torn (being written) or cut at the tail's start
        if isinstance(record, dict) and isinstance(record.get("stage"), str):
            name, value = headline(record)
            step = record.get("step")
            stamp = record.get("time")
            return Progress(record["stage"], step if isinstance(step, int) and not isinstance(step, bool) else None, name, value,
                            float(stamp) if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else None)
    return None


def _json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _top_level(spec_path: Path, key: str) -> str:
    """A top-level scalar of a saved spec.yaml (slca writes them one per line) without parsing the whole file."""
    try:
        with open(spec_path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith(f"{key}:"):
                    return line.split(":", 1)[1].strip().strip("'\"")
    except OSError:
        pass
    return ""


def _launcher_of(run_dir: Path, record: dict[str, Any]) -> str:
    """The launcher of a run not in a sweep: the one its job id belongs to, else its spec's."""
    if str(record.get("job_id", "")).startswith("local:"):
        return "local"
    try:
        with open(run_dir / "spec.yaml", encoding="utf-8", errors="replace") as handle:
            in_launcher = False
            for line in handle:
                if not line.startswith(" "):
                    in_launcher = line.startswith("launcher:")
                elif in_launcher and line.strip().startswith("name:"):
                    return line.split(":", 1)[1].strip().strip("'\"")
    except OSError:
        pass
    return "local"


def _argv_overrides(run_dir: Path) -> list[str]:
    """The overrides of the command that created the run (its provenance), bar the experiment and run.dir."""
    prov = _json(run_dir / "provenance.json")
    history = prov.get("history")
    first = history[0] if isinstance(history, list) and history and isinstance(history[0], dict) else prov
    argv = first.get("argv") if isinstance(first.get("argv"), list) else []
    return [a for a in argv if isinstance(a, str) and "=" in a and not a.startswith(("experiment=", "run.dir=", "-"))]


def sweep_targets(sweep_dir: Path) -> list[Target]:
    from slca.launch.sweep import read_manifest

    manifest = read_manifest(sweep_dir)
    name, launcher = str(manifest.get("name") or sweep_dir.name), str(manifest.get("launcher", "local"))
    out = []
    for key, entry in manifest["runs"].items():
        point = entry.get("point") if isinstance(entry.get("point"), dict) else {}
        out.append(Target(Path(entry.get("run_dir") or sweep_dir / "runs" / key), key, name, launcher,
                          [f"{k}={override_value(v)}" for k, v in point.items()], entry.get("job_id"), entry.get("array_index"),
                          str(entry.get("log") or "")))
    return out


def run_target(run_dir: Path) -> Target:
    """A run directory: its sweep's entry when it lies in one, else what its own records say."""
    sweep_dir = run_dir.parent.parent
    if run_dir.parent.name == "runs" and (sweep_dir / lookup.MANIFEST).is_file():
        for target in sweep_targets(sweep_dir):
            if target.run_dir.resolve() == run_dir.resolve():
                return target
    submitted = _json(run_dir / "submission.json")
    record = read_record(run_dir) or {}
    launcher = str(submitted.get("launcher") or _launcher_of(run_dir, record))
    job_id = submitted.get("job_id") or record.get("job_id")
    return Target(run_dir, run_dir.name, "", launcher, _argv_overrides(run_dir), job_id, submitted.get("array_index"),
                  str(submitted.get("log") or record.get("log") or ""))


def targets(path: Path | None, root: Path = lookup.DEFAULT_ROOT) -> list[Target]:
    """The runs of a sweep directory, one run directory, or (path None) every run under `root`."""
    if path is not None:
        if (path / lookup.MANIFEST).is_file():
            return sweep_targets(path)
        if (path / lookup.SPEC).is_file():
            return [run_target(path)]
        raise SweepError(f"{path}: neither a sweep directory (manifest.json) nor a run directory (spec.yaml)")
    runs, sweeps = lookup.walk(root) if root.is_dir() else ([], [])
    out = [t for s in sweeps for t in sweep_targets(s)]
    in_sweeps = {t.run_dir.resolve() for t in out}
    out += [run_target(r) for r in runs if r.resolve() not in in_sweeps]
    return out


def _stamp(value: Any) -> float | None:
    """An ISO time of a job record as epoch seconds (None when unreadable)."""
    try:
        return datetime.fromisoformat(str(value)).timestamp()
    except ValueError:
        return None


def view(target: Target, live: Any | None, now: float, unasked: str = "") -> RunView:
    """One run's view; `live` is its launcher's `LiveJob` (None: its job is not queued or running);
    `unasked` is why the scheduler could not be asked (the run is then `unknown` unless finished)."""
    entry = {"run_dir": str(target.run_dir), "job_id": target.job_id, "log": target.log}
    status = run_status(entry, live.state if live else None)
    if unasked and status.state != FINISHED:
        status = RunStatus(UNKNOWN, unasked, status.log)
    if status.state == MISSING and not target.sweep and (target.run_dir / lookup.SPEC).is_file():
        # Run in a terminal (no job record): it wrote no outcome, and nothing runs it.
        status = RunStatus(STALE, f"neither running nor finished, with no job record (run in a terminal?); "
                                  f"`slca run --spec {target.run_dir / lookup.SPEC}` resumes it", status.log)
    record = read_record(target.run_dir) or {}
    current = target.job_id is None or record.get("job_id") == target.job_id
    if live is not None and live.restarts is not None:
        requeues = live.restarts
    else:
        requeues = max(0, int(record.get("job_attempt", 1)) - 1) if current and record else 0
    prog = progress(target.run_dir)
    # This attempt's wall time: to its end, to now while its job runs, else to its last metrics line.
    start = _stamp(record.get("started")) if current else None
    end = _stamp(record.get("ended") or record.get("cancelled")) if record.get("ended") or record.get("cancelled") else None
    if end is None and live is not None and live.state == "running":
        end = now
    if end is None and prog is not None:
        end = prog.time
    wall = max(0.0, end - start) if start is not None and end is not None else None
    prov = _json(target.run_dir / "provenance.json")
    attempts = record.get("attempts")
    return RunView(
        run=target.name, sweep=target.sweep, run_dir=str(target.run_dir), experiment=_top_level(target.run_dir / lookup.SPEC, "experiment"),
        overrides=target.overrides, launcher=target.launcher, job_id=target.job_id or record.get("job_id"), array_index=target.array_index,
        state=status.state, requeues=requeues, detail=status.error, stage=prog.stage if prog else "", step=prog.step if prog else None,
        metric=prog.metric if prog else "", value=prog.value if prog else None, wall_s=wall, log=status.log or target.log,
        created=str(prov.get("created_utc") or ""), attempts=len(attempts) if isinstance(attempts, list) else int(bool(record)))


def collect(path: Path | None, root: Path = lookup.DEFAULT_ROOT) -> list[RunView]:
    """The views of `targets(path, root)`, asking each launcher once about all its runs' jobs."""
    found = targets(path, root)
    by_launcher: dict[str, dict[str, dict[str, Any]]] = {}
    for t in found:
        by_launcher.setdefault(t.launcher, {})[str(t.run_dir)] = {"run_dir": str(t.run_dir), "job_id": t.job_id}
    live: dict[str, Any] = {}
    unasked: dict[str, str] = {}
    for name, records in by_launcher.items():
        try:
            live.update(get_launcher(name).live(records))
        except SweepError as exc:  # this launcher's runs read as unknown; the others are still shown
            unasked[name] = str(exc)
    now = time.time()
    return [view(t, live.get(str(t.run_dir)), now, unasked.get(t.launcher, "")) for t in found]
