"""Run `llamafactory-cli train` as a subprocess and read its loss curve back.

The child's stdout and stderr go, line by line, to the stage's log file and to this process's
stdout. A failed run is reported by the last error line LLaMA-Factory (or Python) printed and the
log's path; the loss curve is LLaMA-Factory's own `trainer_log.jsonl` in the output directory.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from slca.runcontext import RunError
from slca.signals import stop_child, wait_child

# A Python exception line ("ValueError: ...", "torch.OutOfMemoryError: ...") or a logged error record.
_ERROR_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*(?:Error|Exception)(?::|$)|\[ERROR\b)")
# torchrun prefixes each worker's lines with its rank.
_RANK_PREFIX = re.compile(r"^\[rank\d+\]:\s*")

# trainer_log.jsonl keys → metric names (the rest of a record is progress bookkeeping).
_CURVE = {"loss": "loss", "lr": "lr", "epoch": "epoch", "grad_norm": "grad_norm"}


class LlamaFactoryFailed(RunError):
    """LLaMA-Factory exited with an error; the message holds its error line and the log path."""


def error_line(lines: list[str]) -> str:
    """The last line of the output that names an error, else the last non-empty line."""
    for line in reversed(lines):
        text = _RANK_PREFIX.sub("", line.strip())
        if _ERROR_LINE.match(text):
            return text
    for line in reversed(lines):
        if line.strip():
            return line.strip()
    return "no output"


def run_streamed(argv: list[str], env: dict[str, str], log_path: Path, *, cwd: Path | None = None,
                 echo: Callable[[str], None] = lambda s: sys.stdout.write(s)) -> None:
    """Run `argv` with `env` added to this process's environment; raise LlamaFactoryFailed on a
    non-zero exit. Output is appended to `log_path` as it arrives."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    tail: list[str] = []
    with open(log_path, "a", encoding="utf-8") as log:
        log.write("$ " + " ".join(argv) + "\n")
        log.flush()
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, encoding="utf-8", errors="replace", bufsize=1)
        except OSError as exc:
            raise LlamaFactoryFailed(f"cannot start {argv[0]}: {exc.strerror or exc}; log: {log_path}") from None
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                log.write(line)
                echo(line)
                tail.append(line)
                del tail[:-400]
        except BaseException:  # interrupted or terminated: LLaMA-Factory stops too, not orphaned
            proc.stdout.close()  # nobody reads its last words: a full pipe must not block its exit
            stop_child(proc)
            raise
        code = wait_child(proc)
    if code:
        raise LlamaFactoryFailed(f"LLaMA-Factory failed (exit {code}): {error_line(tail)}; log: {log_path}")


def loss_curve(output_dir: Path) -> Iterator[tuple[int, dict[str, float]]]:
    """(step, metrics) for each loss record in LLaMA-Factory's trainer_log.jsonl, in step order; the
    final summary record (no loss) and unreadable lines are left out. A resumed run appends the
    steps after its checkpoint again: the newest record of a step wins."""
    path = output_dir / "trainer_log.jsonl"
    if not path.exists():
        return
    by_step: dict[int, dict[str, float]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or "loss" not in record or not isinstance(record.get("current_steps"), int):
            continue
        by_step[record["current_steps"]] = {name: float(record[key]) for key, name in _CURVE.items() if isinstance(record.get(key), (int, float))}
    yield from sorted(by_step.items())


def train_summary(output_dir: Path) -> dict[str, Any]:
    """LLaMA-Factory's train_results.json (runtime, final loss, samples per second), if written."""
    path = output_dir / "train_results.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, (int, float))} if isinstance(data, dict) else {}
