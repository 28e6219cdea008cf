"""Finding run and sweep directories: every run directory under a root, and a run named by a unique
prefix of its id (docs/launch.md#operating-runs).

A run directory is one holding `spec.yaml` (nothing below it is searched: its stage folders hold no
runs); a sweep directory is one holding `manifest.json`. A run's id is its path under the root
(`embedded_demo/20261202T101500Z`, `sweeps/main/runs/estimator-grpo_run.seed-0`); a prefix matches
that path or the directory's own name, so `20261202T10` and `estimator-grpo_run.seed-0` both work
when only one run matches. `resolve` is the one lookup: `slca status/logs/cancel/results/report`,
`slca eval --from` and `--compare`, and the spec field `eval.from_run` (on `slca run`, `slca eval`,
`slca sweep`) all go through it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from slca.launch.errors import SweepError

if TYPE_CHECKING:
    from slca.config.spec import Spec

DEFAULT_ROOT = Path("runs")
SPEC, MANIFEST = "spec.yaml", "manifest.json"


def walk(root: Path) -> tuple[list[Path], list[Path]]:
    """(run directories, sweep directories) under `root`, sorted; hidden folders are left out."""
    runs, sweeps = [], []
    for folder, dirs, files in os.walk(root):
        if SPEC in files:
            runs.append(Path(folder))
            dirs[:] = []
            continue
        if MANIFEST in files:
            sweeps.append(Path(folder))
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    return sorted(runs), sorted(sweeps)


def resolve(name: str, root: Path = DEFAULT_ROOT, *, sweeps: bool = True, label: str = "") -> Path:
    """The path `name` names: an existing path as is, else the one run (or sweep, unless `sweeps` is
    false) directory under `root` whose id starts with `name`. Every command and spec field that takes a
    run directory finds it here; `label` heads the one-line refusal (the field, e.g. `eval.from_run=`)."""
    path = Path(name)
    if path.exists():
        return path
    runs, found_sweeps = walk(root) if root.is_dir() else ([], [])
    candidates = (*found_sweeps, *runs) if sweeps else runs
    found = [d for d in candidates if d.name.startswith(name) or d.relative_to(root).as_posix().startswith(name)]
    if len(found) == 1:
        return found[0]
    what = "run or sweep" if sweeps else "run"
    if not found:
        raise SweepError(f"{label}{name}: no such directory, and no {what} under {root}/ has an id starting with it")
    shown = ", ".join(d.relative_to(root).as_posix() for d in found[:4]) + (", ..." if len(found) > 4 else "")
    raise SweepError(f"{label}{name}: {len(found)} directories under {root}/ match ({shown}); give more of the id")


def with_from_run_found(spec: Spec, root: Path = DEFAULT_ROOT) -> Spec:
    """`spec` with `eval.from_run` naming the run directory its prefix names (saved so, a rerun or a
    job reads the same run whatever runs are added later)."""
    if not spec.eval.from_run or "eval" not in spec.run.stages:
        return spec
    found = str(resolve(spec.eval.from_run, root, sweeps=False, label="eval.from_run="))
    if found == spec.eval.from_run:
        return spec
    return spec.model_copy(update={"eval": spec.eval.model_copy(update={"from_run": found})})
