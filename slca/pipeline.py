"""Stage orchestration: one run directory, stages in order, each skipped when already done.

A stage is a function `(RunContext) -> dict` registered by name. Its result is written to
`<run_dir>/<stage>/result.json` when it finishes, with a fingerprint of the spec sections it depends
on; with `run.resume`, a stage whose result matches the current spec is skipped and its result reused,
and one produced by a different spec is an error. Stages that need a backend ask the backend registry.
"""

from __future__ import annotations

import importlib
import json
import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from slca.config.io import write_spec
from slca.config.spec import Spec
from slca.fileio import atomic_write_json
from slca.registry import Registry


class StageUnavailable(RuntimeError):
    """The requested stage has no implementation for this spec (for example a backend not built yet)."""


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
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    evaluate: Callable[[Any, Any, int], dict[str, float]] | None = None

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


StageFn = Callable[[RunContext], dict[str, Any]]
_STAGES: Registry[StageFn] = Registry("stage")


def register_stage(name: str) -> Callable[[StageFn], StageFn]:
    """Register a stage function under `name`; a second registration of a name is an error."""
    return _STAGES.register(name)


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

        return {k: ctx.relative(v) for k, v in ensure_synthetic(data).as_dict().items()}
    missing = [p for p in (data.sft_path, data.rl_path, data.eval_path) if not Path(p).is_file()]
    if missing:
        raise FileNotFoundError(f"data files not found: {', '.join(missing)} (set data.sft_path / rl_path / eval_path)")
    return {"sft": ctx.relative(data.sft_path), "rl": ctx.relative(data.rl_path), "eval": ctx.relative(data.eval_path)}


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


# What each stage's result depends on (dotted spec paths); a stage's fingerprint also covers the
# stages before it, so changing SFT settings invalidates RL and eval too.
STAGE_INPUTS: dict[str, tuple[str, ...]] = {
    "data": ("data",),
    "sft": ("run.seed", "backbone", "backend", "train.sft"),
    "rl": ("estimator", "reward", "filter", "downsample", "simulator", "train.rl"),
    "eval": ("eval", "reward", "simulator"),
}


def stage_fingerprint(spec: Spec, stage: str) -> str:
    """Hash of the spec sections that decide `stage`'s result and those of the stages before it."""
    import hashlib

    dumped = spec.model_dump(mode="json")
    order = list(STAGE_INPUTS)
    parts = {}
    for name in order[: order.index(stage) + 1]:
        for path in STAGE_INPUTS[name]:
            node: Any = dumped
            for key in path.split("."):
                node = node[key]
            parts[path] = node
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


class StageMismatch(RuntimeError):
    """A finished stage in the run directory was produced by a different spec."""


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
    if spec.run.resume:
        check_resumable(spec, run_dir)  # before spec.yaml is replaced: it must keep describing the results
    run_dir.mkdir(parents=True, exist_ok=True)
    write_spec(spec, run_dir / "spec.yaml")
    atomic_write_json(run_dir / "provenance.json", provenance.collect(spec, argv=argv))
    return spec, run_dir


def _in_memory_evaluator(ctx: RunContext) -> Callable[[Any, Any, int], dict[str, float]]:
    def evaluate(model: Any, tokenizer: Any, step: int) -> dict[str, float]:
        from slca.evaluation.stage import evaluate_in_memory

        return evaluate_in_memory(ctx, model, tokenizer, step)

    return evaluate


def finished_result(spec: Spec, run_dir: Path, stage: str) -> dict[str, Any] | None:
    """The stage's recorded result if it finished for this spec; None if it has not finished.

    Raises StageMismatch when it finished for a different spec."""
    result_path = run_dir / stage / "result.json"
    if not result_path.is_file():
        return None
    done = json.loads(result_path.read_text(encoding="utf-8"))
    if done.get("fingerprint") != stage_fingerprint(spec, stage):
        raise StageMismatch(
            f"stage '{stage}' in {run_dir} was produced by a different spec ({', '.join(STAGE_INPUTS[stage])} "
            "or an earlier stage's settings changed); use a new run.dir, or run.resume=false to redo it"
        )
    return done


def check_resumable(spec: Spec, run_dir: Path) -> None:
    """Raise StageMismatch if any finished stage in `run_dir` was produced by a different spec."""
    for stage in spec.run.stages:
        finished_result(spec, run_dir, stage)


def run_pipeline(spec: Spec, run_dir: Path, tracker: Any, *, echo: Callable[[str], None] = print) -> list[StageOutcome]:
    """Run the spec's stages in order; stop at the first stage that is unavailable or fails."""
    ctx = RunContext(spec=spec, run_dir=run_dir, tracker=tracker)
    ctx.evaluate = _in_memory_evaluator(ctx)
    outcomes: list[StageOutcome] = []
    for stage in spec.run.stages:
        result_path = run_dir / stage / "result.json"
        done = finished_result(spec, run_dir, stage) if spec.run.resume else None
        if done is not None:
            ctx.results[stage] = done
            outcomes.append(StageOutcome(stage, "skipped", detail="already done"))
            echo(f"[{stage}] already done, skipped")
            continue
        if not spec.run.resume and (run_dir / stage).exists():
            shutil.rmtree(run_dir / stage)  # a fresh start must not pick up this stage's old checkpoints
        echo(f"[{stage}] running")
        start = time.perf_counter()
        try:
            result = _STAGES[stage](ctx)
        except StageUnavailable as exc:
            outcomes.append(StageOutcome(stage, "unavailable", time.perf_counter() - start, str(exc)))
            echo(f"[{stage}] {exc}")
            break
        seconds = time.perf_counter() - start
        result = {**result, "fingerprint": stage_fingerprint(spec, stage)}
        ctx.results[stage] = result
        atomic_write_json(result_path, result)
        outcomes.append(StageOutcome(stage, "done", seconds))
        echo(f"[{stage}] done in {seconds:.1f}s")
    return outcomes
