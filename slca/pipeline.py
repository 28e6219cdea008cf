"""Stage orchestration: one run directory, stages in order, each skipped when already done.

A stage is a function `(RunContext) -> dict` registered by name. Its result is written to
`<run_dir>/<stage>/result.json` when it finishes; with `run.resume`, a stage that has a result is
skipped and its result reused. Stages that need a backend ask the backend registry for it.
"""

from __future__ import annotations

import importlib
import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from slca.config.io import write_spec
from slca.config.spec import Spec
from slca.fileio import atomic_write_json


class StageUnavailable(RuntimeError):
    """The requested stage has no implementation for this spec (for example a backend not built yet)."""


@dataclass
class RunContext:
    """What a stage sees: the spec, its run directory, the tracker and earlier stages' results."""

    spec: Spec
    run_dir: Path
    tracker: Any
    results: dict[str, dict[str, Any]] = field(default_factory=dict)

    def stage_dir(self, stage: str) -> Path:
        path = self.run_dir / stage
        path.mkdir(parents=True, exist_ok=True)
        return path


StageFn = Callable[[RunContext], dict[str, Any]]
_STAGES: dict[str, StageFn] = {}


def register_stage(name: str) -> Callable[[StageFn], StageFn]:
    """Register a stage function under `name`; a second registration of a name is an error."""
    def wrap(fn: StageFn) -> StageFn:
        if name in _STAGES:
            raise ValueError(f"stage {name!r} is already registered")
        _STAGES[name] = fn
        return fn
    return wrap


# Backend name -> module whose `STAGES` dict maps stage names to stage functions.
BACKEND_MODULES = {
    "local": "slca.backends.local.stages",
    "verl": "slca.backends.verl.stages",
    "llamafactory": "slca.backends.llamafactory.stages",
}
EVAL_MODULE = "slca.evaluation.stage"


def _load_stage(module_name: str, stage: str, what: str) -> StageFn:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise StageUnavailable(f"stage '{stage}' is not available yet: {what} is not implemented") from None
        raise
    stages: dict[str, StageFn] = getattr(module, "STAGES", {})
    if stage not in stages:
        raise StageUnavailable(f"stage '{stage}' is not supported by {what} (it runs: {', '.join(stages) or 'nothing'})")
    return stages[stage]


@register_stage("data")
def data_stage(ctx: RunContext) -> dict[str, Any]:
    """Materialise the splits: generate the synthetic set (cached) or check the Toucan files exist."""
    data = ctx.spec.data
    if data.name == "synthetic":
        from slca.data.synth import ensure_synthetic

        return ensure_synthetic(data).as_dict()
    missing = [p for p in (data.sft_path, data.rl_path, data.eval_path) if not Path(p).is_file()]
    if missing:
        raise FileNotFoundError(f"data files not found: {', '.join(missing)} (set data.sft_path / rl_path / eval_path)")
    return {"sft": data.sft_path, "rl": data.rl_path, "eval": data.eval_path}


def _backend_stage(stage: str) -> StageFn:
    def run(ctx: RunContext) -> dict[str, Any]:
        backend = ctx.spec.backend.name
        return _load_stage(BACKEND_MODULES[backend], stage, f"backend '{backend}'")(ctx)
    run.__name__ = f"{stage}_stage"
    run.__doc__ = f"The {stage} stage of the configured backend."
    return run


register_stage("sft")(_backend_stage("sft"))
register_stage("rl")(_backend_stage("rl"))


@register_stage("eval")
def eval_stage(ctx: RunContext) -> dict[str, Any]:
    """Evaluate the latest policy with the configured protocol."""
    return _load_stage(EVAL_MODULE, "eval", "the evaluation harness")(ctx)


@dataclass
class StageOutcome:
    """How one stage ended: done, skipped (already done), unavailable, or failed."""

    stage: str
    status: str
    seconds: float = 0.0
    detail: str = ""


def resolve_run_dir(spec: Spec, now: datetime | None = None) -> Path:
    """`run.dir`, or runs/<experiment>/<UTC timestamp> when unset."""
    if spec.run.dir:
        return Path(spec.run.dir)
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    return Path("runs") / (spec.run.name or spec.experiment) / stamp


def prepare_run_dir(spec: Spec, *, argv: list[str] | None = None) -> tuple[Spec, Path]:
    """Create the run directory and write spec.yaml (with the resolved run.dir) and provenance.json."""
    from slca.config import provenance

    run_dir = resolve_run_dir(spec)
    spec = spec.model_copy(update={"run": spec.run.model_copy(update={"dir": str(run_dir)})})
    run_dir.mkdir(parents=True, exist_ok=True)
    write_spec(spec, run_dir / "spec.yaml")
    atomic_write_json(run_dir / "provenance.json", provenance.collect(spec, argv=argv))
    return spec, run_dir


def run_pipeline(spec: Spec, run_dir: Path, tracker: Any, *, echo: Callable[[str], None] = print) -> list[StageOutcome]:
    """Run the spec's stages in order; stop at the first stage that is unavailable or fails."""
    ctx = RunContext(spec=spec, run_dir=run_dir, tracker=tracker)
    outcomes: list[StageOutcome] = []
    for stage in spec.run.stages:
        result_path = run_dir / stage / "result.json"
        if spec.run.resume and result_path.is_file():
            ctx.results[stage] = json.loads(result_path.read_text(encoding="utf-8"))
            outcomes.append(StageOutcome(stage, "skipped", detail="already done"))
            echo(f"[{stage}] already done, skipped")
            continue
        echo(f"[{stage}] running")
        start = time.perf_counter()
        try:
            result = _STAGES[stage](ctx)
        except StageUnavailable as exc:
            outcomes.append(StageOutcome(stage, "unavailable", time.perf_counter() - start, str(exc)))
            echo(f"[{stage}] {exc}")
            break
        seconds = time.perf_counter() - start
        ctx.results[stage] = result
        atomic_write_json(result_path, result)
        outcomes.append(StageOutcome(stage, "done", seconds))
        echo(f"[{stage}] done in {seconds:.1f}s")
    return outcomes
