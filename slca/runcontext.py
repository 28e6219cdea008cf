"""What a stage receives and how it says it cannot go on: a leaf module, so backends and evaluation
take their run context from here and never import the pipeline that calls them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from slca.config.spec import Spec
from slca.stage_results import StageResult, StageResults


class StageUnavailable(RuntimeError):
    """The requested stage has no implementation for this spec (for example a backend not built yet)."""


class DryRunStop(Exception):
    """A stage under `slca run --dry-run` wrote what it would launch and printed the command; the run
    stops there, successfully (the stage is not done: nothing trained)."""


class RunError(RuntimeError):
    """A run that cannot go on as asked; `str()` is the whole one-line message for the user."""


class StageMismatch(RunError):
    """A finished stage in the run directory was produced by a different spec."""


class StageStateError(RunError):
    """A finished stage's record is unreadable, or the outputs it recorded are gone."""


class StageInputError(RunError):
    """A stage's input file is missing, unreadable or has a bad row (named in the message)."""


@dataclass
class RunContext:
    """What a stage sees: the spec, its run directory, the tracker and earlier stages' results.

    `evaluate(model, tokenizer, step)` runs the spec's evaluation on a policy in memory (training
    backends call it every `train.rl.eval_every_steps`); the pipeline provides it so that backends
    and evaluation need not import each other.
    """

    spec: Spec
    run_dir: Path
    tracker: Any
    results: StageResults = field(default_factory=StageResults)
    evaluate: Callable[[Any, Any, int], dict[str, float]] | None = None
    dry_run: bool = False  # `slca run --dry-run`: write what a stage would launch, print the command, train nothing

    def stage_dir(self, stage: str) -> Path:
        path = self.run_dir / stage
        path.mkdir(parents=True, exist_ok=True)
        return path

    def relative(self, path: str | Path) -> str:
        """How a stage result records a path: relative to the run directory when inside it, so a run
        directory can be moved or copied; absolute otherwise."""
        resolved = Path(path).resolve()
        try:
            return str(resolved.relative_to(self.run_dir.resolve()))
        except ValueError:
            return str(resolved)

    def resolve(self, recorded: str | Path) -> Path:
        """Inverse of `relative`."""
        path = Path(recorded)
        return path if path.is_absolute() else self.run_dir / path

    def split_path(self, split: str) -> Path:
        """The file stages read for `split` (sft, rl, eval): the curate stage's kept rows for rl when
        that stage ran, else the data stage's file."""
        if split == "rl" and self.results.curate is not None:
            return self.resolve(self.results.curate.rl)
        if self.results.data is not None:
            return self.resolve(self.results.data.split(split))
        raise KeyError(f"no stage of this run recorded the {split} split (run the data stage first)")


StageFn = Callable[[RunContext], StageResult]


def resolve_run_dir(spec: Spec, now: datetime | None = None) -> Path:
    """`run.dir`, or runs/<experiment>/<UTC timestamp> when unset."""
    if spec.run.dir:
        return Path(spec.run.dir)
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    return Path("runs") / (spec.run.name or spec.experiment) / stamp
