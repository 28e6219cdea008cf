"""Finding run and sweep directories: every run directory under a root, and a run named by a unique
prefix of its id (docs/launch.md#operating-runs).

A run directory is one holding `spec.yaml` (nothing below it is searched: its stage folders hold no
runs); a sweep directory is one holding `manifest.json`. A run's id is its path under the root
(`embedded_demo/20261202T101500Z`, `sweeps/main/runs/estimator-grpo_run.seed-0`); a prefix matches
that path or the directory's own name, so `20261202T10` and `estimator-grpo_run.seed-0` both work
when only one run matches.
"""

from __future__ import annotations

import os
from pathlib import Path

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


def resolve(name: str, root: Path = DEFAULT_ROOT) -> Path:
    """The run or sweep directory `name` names: an existing path as is, else the one directory under
    `root` whose id starts with `name`."""
    from slca.launch.base import SweepError  # imported here: the parser reads DEFAULT_ROOT without the config models

    path = Path(name)
    if path.is_dir():
        return path
    runs, sweeps = walk(root) if root.is_dir() else ([], [])
    found = [d for d in (*sweeps, *runs) if d.name.startswith(name) or d.relative_to(root).as_posix().startswith(name)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise SweepError(f"{name}: no such directory, and no run or sweep under {root}/ has an id starting with it")
    shown = ", ".join(d.relative_to(root).as_posix() for d in found[:4]) + (", ..." if len(found) > 4 else "")
    raise SweepError(f"{name}: {len(found)} directories under {root}/ match ({shown}); give more of the id")


def expand(name: str, root: Path = DEFAULT_ROOT) -> str:
    """For commands with their own message for a bad path: `name` as given when it exists or no run's
    id starts with it, else the one directory it names (an ambiguous prefix is refused)."""
    from slca.launch.base import SweepError

    try:
        return str(resolve(name, root))
    except SweepError as exc:
        if " match (" in str(exc):
            raise
        return name
