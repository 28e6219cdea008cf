"""One tracker per run: every `log` call appends a JSON line and forwards to W&B when configured."""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from slca.config.groups.logger import LoggerConfig, WandbLogger


class Tracker:
    """Appends `{"step", "stage", "time", **metrics}` lines to `metrics.jsonl`; mirrors them to W&B.

    A line torn by a kill mid-write (no final newline) is dropped when the file is opened, so the
    next line appended does not fuse with it into one unreadable line. W&B is started
    (`start_wandb()`) by the first record, so a re-run whose stages are all done, which logs
    nothing, leaves the W&B files as they were.
    """

    def __init__(self, run_dir: Path, start_wandb: Callable[[], Any] | None = None) -> None:
        self.path = Path(run_dir) / "metrics.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _drop_torn_line(self.path)
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._start_wandb = start_wandb
        self._wandb: Any = None

    def _wandb_run(self) -> Any:
        if self._wandb is None and self._start_wandb is not None:
            self._wandb, self._start_wandb = self._start_wandb(), None
        return self._wandb

    def log(self, metrics: dict[str, Any], *, step: int, stage: str) -> None:
        """Record one step's metrics; non-finite floats are written as null (JSON has no NaN)."""
        clean = {k: _jsonable(v) for k, v in metrics.items()}
        line = {"stage": stage, "step": step, "time": round(time.time(), 3), **clean}
        run = self._wandb_run()  # started first: a record in metrics.jsonl means its W&B run exists too
        self._file.write(json.dumps(line, sort_keys=False) + "\n")
        self._file.flush()
        if run is not None:
            # Stages restart their step counts, and W&B steps must only grow: log the stage step as a metric.
            numeric = {f"{stage}/{k}": v for k, v in clean.items() if isinstance(v, (int, float))}
            run.log({**numeric, f"{stage}/step": step})

    def rewind(self, redone: Callable[[dict[str, Any]], bool]) -> int:
        """Drop the records for which `redone(record)` is true; returns how many were dropped.

        A stage resumed from its step-S checkpoint logs what came after S again: without this, the
        steps a killed or requeued attempt logged after its last checkpoint would appear twice
        (docs/launch.md#preemption-and-requeue). The file is replaced atomically."""
        from slca.fileio import atomic_write_text

        self._file.flush()
        kept, dropped = [], 0
        for line in self.path.read_text(encoding="utf-8").splitlines(keepends=True):
            try:
                record = json.loads(line)
            except ValueError:
                record = None  # not ours to judge: kept as it is
            if isinstance(record, dict) and redone(record):
                dropped += 1
            else:
                kept.append(line)
        if dropped:
            self._file.close()
            atomic_write_text(self.path, "".join(kept))
            self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        return dropped

    def summary(self, values: dict[str, Any]) -> None:
        """Final numbers of the run (W&B run summary; metrics.jsonl gets a `summary` line)."""
        self.log(values, step=-1, stage="summary")
        if (run := self._wandb_run()) is not None:
            run.summary.update({k: v for k, v in values.items() if isinstance(v, (int, float, str))})

    def close(self) -> None:
        self._file.close()
        if self._wandb is not None:
            run, self._wandb = self._wandb, None
            try:
                run.finish()
            except (OSError, EOFError) as exc:
                # W&B's service is a child process: a job stopped by its scheduler (requeue, time limit)
                # loses it with the rest of the process group, and the lost socket must not replace the
                # stop this run is unwinding from. metrics.jsonl, the record slca reads, is complete.
                print(f"slca: W&B could not finish its run ({type(exc).__name__}: {exc}); metrics.jsonl holds every record", file=sys.stderr)

    def __enter__(self) -> "Tracker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _drop_torn_line(path: Path) -> None:
    """Cut a last line that has no newline: a write torn by a kill, never a complete record."""
    try:
        with open(path, "r+b") as fh:
            end = fh.seek(0, os.SEEK_END)
            if end == 0:
                return
            fh.seek(end - 1)
            if fh.read(1) == b"\n":
                return
            fh.seek(0)
            fh.truncate(fh.read().rfind(b"\n") + 1)
    except FileNotFoundError:
        return


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def open_tracker(run_dir: Path, logger: LoggerConfig, *, spec_dict: dict[str, Any], run_name: str) -> Tracker:
    """A tracker for `run_dir`; W&B (started by the first record) writes under `run_dir/wandb` and gets the
    resolved spec as config."""
    if not (isinstance(logger, WandbLogger) and logger.mode != "disabled"):
        return Tracker(run_dir)

    def start() -> Any:
        import wandb

        run = wandb.init(
            id=_wandb_run_id(run_dir),
            resume="allow",
            project=logger.project,
            entity=logger.entity,
            group=logger.group,
            tags=list(logger.tags) or None,
            name=run_name,
            dir=str(run_dir),
            config=spec_dict,
            mode=logger.mode,
            reinit="finish_previous",
            # W&B's own banner and closing summary are ~30 lines per run; the terminal gets slca's one.
            settings=wandb.Settings(silent=True),
        )
        where = f"offline under {Path(run_dir) / 'wandb'}: `wandb sync` uploads it" if logger.mode == "offline" else run.url
        print(f"slca: W&B run {run.id} ({where})", file=sys.stderr)
        return run

    return Tracker(run_dir, start)


WANDB_ID_FILE = "wandb/slca-run-id"


def _wandb_run_id(run_dir: Path) -> str:
    """The run directory's W&B run id, made once and kept in the run directory: a resumed or requeued
    run continues the same W&B run instead of starting a new one."""
    from slca.fileio import atomic_write_text

    path = Path(run_dir) / WANDB_ID_FILE
    try:
        existing = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        existing = ""
    if existing.isalnum():
        return existing
    import uuid

    run_id = uuid.uuid4().hex[:16]  # W&B ids: letters and digits
    atomic_write_text(path, run_id + "\n")
    return run_id
