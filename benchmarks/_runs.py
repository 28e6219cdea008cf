"""Shared helpers of the end-to-end benchmarks: run `slca` and read what a run wrote."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def slca_run(run_dir: Path, *overrides: str, cwd: Path) -> float:
    """`slca run run.dir=... overrides` to completion; returns wall seconds (raises on failure).

    `-P` keeps `cwd` off the module path: a run directory named `slca` there would shadow the package."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "slca.cli", "run", f"run.dir={run_dir}", "logger=none", *overrides],
        cwd=cwd, capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"slca run failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return time.perf_counter() - start


def fork_run(source: Path, target: Path, keep: tuple[str, ...] = ("data", "sft")) -> Path:
    """A run directory starting from `source`'s finished stages in `keep` (a shared warm-start).

    An existing target is kept: `slca run` resumes it, so an interrupted benchmark continues."""
    if (target / "spec.yaml").exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for stage in keep:
        shutil.copytree(source / stage, target / stage)
    return target


def metrics(run_dir: Path, stage: str) -> list[dict[str, Any]]:
    """The metrics.jsonl lines of one stage."""
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [row for row in map(json.loads, lines) if row["stage"] == stage]


def eval_metrics(run_dir: Path) -> dict[str, dict[str, float]]:
    """Model label (sft, rl) -> the first protocol cell's metric means, from eval/results.json."""
    results = json.loads((run_dir / "eval" / "results.json").read_text())["results"]
    return {r["card"]["model"]["label"]: {k: v["mean"] for k, v in r["cells"][0]["metrics"].items()} for r in results}
