"""The launcher registry and the records launchers hand back (docs/launch.md#launchers)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from slca.config.spec import Spec
from slca.launch.errors import SweepError
from slca.registry import Registry

if TYPE_CHECKING:
    from slca.launch.snapshot import Snapshot


@dataclass(frozen=True)
class RunPlan:
    """One run of a sweep: its key (its directory name), grid values, resolved spec and directory."""

    key: str
    point: dict[str, Any]
    spec: Spec
    run_dir: Path


@dataclass(frozen=True)
class Submission:
    """What a launcher did with one run: the job that runs it and where its log goes."""

    key: str
    job_id: str
    array_index: int | None
    log: str


@dataclass(frozen=True)
class LiveJob:
    """What the scheduler says of a job it still knows: its state (`pending`, `running`, ...) and how
    many times it was requeued (None: the scheduler does not count them)."""

    state: str
    restarts: int | None = None


class Launcher(Protocol):
    """A registered launcher: `submit` starts runs (returning when they are queued, or done for
    launchers that run them here); `live` says which runs' jobs are still queued or running (one
    scheduler query for all of them); `cancel` stops one job and says how (one line)."""

    runs_single_in_process: bool

    def submit(self, plans: list[RunPlan], cfg: Any, *, name: str, log_dir: Path, code: Snapshot) -> list[Submission]: ...

    def live(self, records: dict[str, dict[str, Any]]) -> dict[str, LiveJob]: ...

    def cancel(self, job_id: str, run_dir: Path) -> str: ...


LAUNCHERS: Registry[type] = Registry("launcher")
_MODULES = ("slca.launch.local", "slca.launch.slurm")  # each registers its launcher on import


def get_launcher(name: str) -> Launcher:
    """A fresh launcher registered under `name` (config's `launcher.name`)."""
    for module in _MODULES:
        importlib.import_module(module)
    return LAUNCHERS.get(name)()
