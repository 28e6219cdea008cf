"""Stage orchestration: one run directory, stages in order, each skipped when already done.

A stage is a function `(RunContext) -> <its typed result>` (slca.stage_results) registered by name
and declared in STAGE_DECLS with the spec sections that decide its result and the earlier stages
whose results it needs. Its result is written to `<run_dir>/<stage>/result.json` when it finishes,
with a fingerprint of the spec sections it depends on; with `run.resume`, a stage whose result
matches the current spec is skipped and its result reused, and one produced by a different spec is
an error. A finished stage whose recorded outputs are gone is
redone when that is cheap and deterministic (data), else the error says how to redo it. A stage
records the fingerprint it started under (`started.json`), so an interrupted stage resumes from its
checkpoints only under the same spec. Stages that need a backend ask the backend registry.

`open_run_dir` holds the run directory's lock for the whole run (two runs never write one directory),
appends the invocation to provenance.json, and writes spec.yaml only when this invocation will run a
stage: re-running a finished run leaves the record of what produced its results untouched.
"""

from __future__ import annotations

import importlib
import json
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

from slca.config.io import dump_spec
from slca.config.spec import Spec
from slca.fileio import atomic_write_json, atomic_write_text
from slca.registry import Registry
from slca.runcontext import (  # noqa: F401 - re-exported: callers name them from here too
    DryRunStop,
    RunContext,
    RunError,
    StageFn,
    StageInputError,
    StageMismatch,
    StageStateError,
    StageUnavailable,
    resolve_run_dir,
)
from slca.runlock import RunLock
from slca.safe_yaml import load_yaml
from slca.stage_results import (
    RESULT_TYPES,
    DataResult,
    ResultFileError,
    StageRecord,
    StageResult,
    first_line,
    read_result,
    result_path,
    write_result,
)


_STAGES: Registry[StageFn] = Registry("stage")


def register_stage(name: str) -> Callable[[StageFn], StageFn]:
    """Register a stage function under `name`; a second registration of a name is an error."""
    return _STAGES.register(name)


EVAL_MODULE = "slca.evaluation.stage"
CURATE_MODULE = "slca.curate.stage"


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
def data_stage(ctx: RunContext) -> DataResult:
    """Materialise the splits: generate the synthetic set (cached), or validate the Toucan files.

    Toucan files are checked row by row against their split's schema before any training reads
    them: `data.on_error=fail` stops at the first bad row, naming file, row and field; `skip` writes
    the valid rows and a rejects file into the stage directory and counts both in the result.
    """
    data = ctx.spec.data
    if data.name == "synthetic":
        return _synthetic_result(ctx)
    paths, validation = {}, {}
    for split in SPLIT_PATH_FIELDS:
        path, validation[split] = _checked_split(ctx, split)
        paths[split] = ctx.relative(path)
    return DataResult(**paths, validation=validation)


def _synthetic_result(ctx: RunContext) -> DataResult:
    splits = _synthetic_splits(ctx.spec.data)
    return DataResult(sft=ctx.relative(splits.sft), rl=ctx.relative(splits.rl), eval=ctx.relative(splits.eval))


def _synthetic_splits(data: Any) -> Any:
    """The cached synthetic set; a cache entry with a split file gone is regenerated (same seed, same bytes)."""
    import os
    import uuid

    from slca.data.synth import ensure_synthetic

    paths = ensure_synthetic(data)
    if all(Path(p).exists() for p in paths.as_dict().values()):
        return paths
    # Renamed away before removal, so a concurrent reader never sees a half-deleted entry under the cache name.
    aside = paths.root.parent / f".{paths.root.name}.incomplete-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    os.rename(paths.root, aside)
    shutil.rmtree(aside, ignore_errors=True)
    return ensure_synthetic(data)


def data_without_stage(ctx: RunContext) -> DataResult:
    """The data stage's result for a run that does not list it: its finished result in the run
    directory when it matches the spec, else the spec's own splits (the synthetic cache, or the
    configured Toucan files as they are, unvalidated)."""
    done = _read_record(ctx.run_dir, "data")
    if done is not None and done.fingerprint == stage_fingerprint(ctx.spec, "data"):
        assert isinstance(done.result, DataResult)
        return done.result
    data = ctx.spec.data
    if data.name == "synthetic":
        return _synthetic_result(ctx)
    return DataResult(**{split: ctx.relative(getattr(data, path.split(".")[1])) for split, path in SPLIT_PATH_FIELDS.items()})


# Split -> the config field naming its file, for messages that point at what to fix.
SPLIT_PATH_FIELDS = {"sft": "data.sft_path", "rl": "data.rl_path", "eval": "data.eval_path"}


def _checked_split(ctx: RunContext, split: str) -> tuple[Path, dict[str, Any]]:
    """Validate one Toucan split file with the data package's validator; (the path stages should
    read, the validation counts). With rejects (skip mode) the valid rows are published in the
    stage directory and read from there; otherwise stages read the source in place."""
    from slca.data.errors import DataInputError
    from slca.data.schemas import DataValidationError
    from slca.data.validate import validate_split_file

    config_path = SPLIT_PATH_FIELDS[split]
    source = Path(getattr(ctx.spec.data, config_path.split(".")[1]))
    if not source.is_file():
        raise StageInputError(f"{config_path}: {'not a file' if source.exists() else 'file not found'}: {source}")
    on_error = ctx.spec.data.on_error
    # One folder per split: two sources with the same file name must not share a rejects file.
    rejects_dir = ctx.stage_dir("data") / "rejects" / split if on_error == "skip" else None
    kept = ctx.run_dir / "data" / f"{split}{source.suffix.lower()}"
    try:
        report = validate_split_file(source, split, on_error, rejects_dir)
        if report.n_rejected:  # only in skip mode; a second pass writes the valid rows
            report = validate_split_file(source, split, on_error, rejects_dir, out=kept)
    except DataValidationError as exc:
        raise StageInputError(f"{config_path} (data.on_error=fail): {exc}") from None
    except DataInputError as exc:  # already one line naming the file
        raise StageInputError(f"{config_path}: {exc}") from None
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise StageInputError(f"{source} ({config_path}): cannot read it: {first_line(exc)}") from None
    counts = report.as_dict()
    if not report.n_rejected:
        return source, counts
    counts["rejects"] = ctx.relative(report.rejects_path)
    return kept, counts


def _backend_stage(stage: str) -> StageFn:
    def run(ctx: RunContext) -> StageResult:
        from slca.backends.contract import get_backend

        return get_backend(ctx.spec.backend.name).stage(stage)(ctx)
    run.__name__ = f"{stage}_stage"
    run.__doc__ = f"The {stage} stage of the configured backend."
    return run


register_stage("sft")(_backend_stage("sft"))
register_stage("rl")(_backend_stage("rl"))


@register_stage("curate")
def curate_stage(ctx: RunContext) -> StageResult:
    """Keep the RL prompts the policy can learn from (docs/method.md#offline-prompt-curation)."""
    return _load_stage(CURATE_MODULE, "curate", "offline rollout-based prompt curation")(ctx)


@register_stage("eval")
def eval_stage(ctx: RunContext) -> StageResult:
    """Evaluate the latest policy with the configured protocol."""
    return _load_stage(EVAL_MODULE, "eval", "the evaluation harness")(ctx)


@dataclass(frozen=True)
class StageDecl:
    """What one stage reads. `inputs`: the dotted spec paths that decide its result (its fingerprint
    also covers the stages before it, so changing SFT settings invalidates RL and eval too).
    `needs`: the earlier stages whose results it must have; one the run does not list is had by
    WITHOUT_STAGE. Besides those, a stage reads the newest policy (sft, rl) and the curate stage's RL split
    when the run has them, and starts from the backbone and the data stage's split otherwise.
    `optional`: its settings decide later stages' results only when the run lists it.
    `redo_when_outputs_gone`: cheap and deterministic, so redone unasked when its outputs are gone."""

    inputs: tuple[str, ...]
    needs: tuple[str, ...] = ()
    optional: bool = False
    redo_when_outputs_gone: bool = False


# Every stage, in the order stages run (config.groups.run.STAGE_ORDER).
STAGE_DECLS: dict[str, StageDecl] = {
    "data": StageDecl(("data",), redo_when_outputs_gone=True),
    "sft": StageDecl(("run.seed", "backbone", "backend", "train.sft"), needs=("data",)),
    "curate": StageDecl(("train.curate", "reward", "simulator", "train.rl", "eval.endpoint"), needs=("data",), optional=True),
    "rl": StageDecl(("estimator", "reward", "filter", "downsample", "simulator", "train.rl"), needs=("data",)),
    "eval": StageDecl(("eval", "reward", "simulator"), needs=("data",)),
}
# How a needed stage's result is had when the run does not list that stage.
WITHOUT_STAGE: dict[str, Callable[[RunContext], StageResult]] = {"data": data_without_stage}


def stage_fingerprint(spec: Spec, stage: str) -> str:
    """Hash of the spec sections that decide `stage`'s result and those of the stages before it."""
    import hashlib

    dumped = spec.model_dump(mode="json")
    order = list(STAGE_DECLS)
    parts = {}
    for name in order[: order.index(stage) + 1]:
        if STAGE_DECLS[name].optional and name not in spec.run.stages:
            continue  # later stages read its output only when it runs
        for path in STAGE_DECLS[name].inputs:
            node: Any = dumped
            for key in path.split("."):
                node = node[key]
            parts[path] = node
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


# Written into a stage's folder when it starts: which spec its checkpoints belong to.
STARTED = "started.json"


@dataclass
class StageOutcome:
    """How one stage ended: done, skipped (already done), unavailable, dry run, or failed."""

    stage: str
    status: str
    seconds: float = 0.0
    detail: str = ""


@contextmanager
def open_run_dir(spec: Spec, *, argv: list[str] | None = None, echo: Callable[[str], None] = print) -> Iterator[tuple[Spec, Path, int]]:
    """Create and lock the run directory, record this invocation; yields (spec with run.dir, dir, invocation number).

    Everything that can refuse the run (lock held, unreadable provenance, a finished stage from
    another spec or with its outputs gone) is checked before anything in the directory is written.
    """
    from slca.config import provenance

    run_dir = resolve_run_dir(spec)
    spec = spec.model_copy(update={"run": spec.run.model_copy(update={"dir": str(run_dir)})})
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        lock = RunLock(run_dir, note=echo).acquire()
    except (FileExistsError, NotADirectoryError):
        raise RunError(f"run.dir {run_dir} is not a directory") from None
    except OSError as exc:  # read-only, missing parent on a special filesystem, no space, no locks...
        raise RunError(f"run.dir {run_dir}: cannot create or lock it ({exc.strerror or type(exc).__name__})") from None
    try:
        _check_layout(spec, run_dir)
        try:
            history = provenance.read_provenance(run_dir / "provenance.json")
        except provenance.ProvenanceError as exc:
            raise RunError(str(exc)) from None
        plan = plan_stages(spec, run_dir)
        invocation = _record_invocation(spec, run_dir, history, plan, argv)
        yield spec, run_dir, invocation
    finally:
        lock.release()


def prepare_run_dir(spec: Spec, *, argv: list[str] | None = None) -> tuple[Spec, Path]:
    """`open_run_dir` for callers that run stages themselves (tests, notebooks): the directory is
    checked, spec.yaml and provenance.json written, and the lock released on return."""
    with open_run_dir(spec, argv=argv) as (spec, run_dir, _):
        return spec, run_dir


def _check_layout(spec: Spec, run_dir: Path) -> None:
    """Refuse a run directory whose record files or stage folders are something else (a folder
    where a file belongs, or the reverse) before anything is written into it."""
    for name in ("spec.yaml", "provenance.json", "metrics.jsonl"):
        if (run_dir / name).exists() and not (run_dir / name).is_file():
            raise RunError(f"{run_dir / name} is not a file; move it aside to use this run.dir")
    for stage in spec.run.stages:
        if (run_dir / stage).exists() and not (run_dir / stage).is_dir():
            raise RunError(f"{run_dir / stage} is not a directory (it holds stage '{stage}'); move it aside to use this run.dir")
        result = result_path(run_dir, stage)
        if result.exists() and not result.is_file():
            raise StageStateError(f"{result} is not a file; remove it to redo stage '{stage}'")


def _record_invocation(spec: Spec, run_dir: Path, existing: dict[str, Any] | None, plan: dict[str, StageState], argv: list[str] | None) -> int:
    """Append this invocation to provenance.json; write spec.yaml only if a stage will run.

    A run whose stages are all done keeps its spec.yaml: a re-run with, say, another logger must
    not rewrite the description of results it did not produce. When spec.yaml is replaced, the
    values it held are kept in the history entry (`spec_changes`).
    """
    from slca.config import provenance

    text = dump_spec(spec)
    spec_path = run_dir / "spec.yaml"
    before = _read_text(spec_path)
    to_run = [stage for stage, state in plan.items() if state.status != "done"]
    write = before is None or (bool(to_run) and before != text)
    record = {
        **provenance.collect(spec, argv=argv),
        "spec_sha256": provenance.spec_digest(text),
        "spec_changes": _spec_changes(before, text),
        "spec_written": write,
        "stages_done": [stage for stage, state in plan.items() if state.status == "done"],
        "stages_to_run": to_run,
    }
    document = provenance.append_invocation(existing, record)
    if write:
        atomic_write_text(spec_path, text)
    atomic_write_json(run_dir / "provenance.json", document)
    return len(document["history"])


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _spec_changes(before: str | None, after: str) -> dict[str, list[Any]] | None:
    """Dotted paths whose value differs between two spec.yaml texts: {path: [old, new]}; None if no old one."""
    if before is None:
        return None
    try:
        old = load_yaml(before)
    except yaml.YAMLError:
        return {"<spec.yaml>": ["unreadable", "replaced"]}
    changes: dict[str, list[Any]] = {}

    def walk(a: Any, b: Any, prefix: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b), key=str):
                walk(a.get(key), b.get(key), f"{prefix}.{key}" if prefix else str(key))
        elif a != b:
            changes[prefix or "<root>"] = [a, b]

    walk(old, load_yaml(after), "")
    return changes


def _in_memory_evaluator(ctx: RunContext) -> Callable[[Any, Any, int], dict[str, float]]:
    def evaluate(model: Any, tokenizer: Any, step: int) -> dict[str, float]:
        from slca.evaluation.stage import evaluate_in_memory

        return evaluate_in_memory(ctx, model, tokenizer, step)

    return evaluate


def _read_record(run_dir: Path, stage: str) -> StageRecord | None:
    try:
        return read_result(run_dir, stage)
    except ResultFileError as exc:
        raise StageStateError(f"{exc}; delete it to redo stage '{stage}'") from None


def finished_result(spec: Spec, run_dir: Path, stage: str) -> StageRecord | None:
    """The stage's record if it finished for this spec; None if it has not finished.

    Raises StageMismatch when it finished for a different spec, StageStateError when its
    result.json is unreadable or not that stage's record."""
    done = _read_record(run_dir, stage)
    if done is None:
        return None
    if done.fingerprint != stage_fingerprint(spec, stage):
        raise StageMismatch(
            f"stage '{stage}' in {run_dir} was produced by a different spec ({', '.join(STAGE_DECLS[stage].inputs)} "
            "or an earlier stage's settings changed); use a new run.dir, or run.resume=false to redo it"
        )
    return done


def missing_outputs(run_dir: Path, result: StageResult) -> list[str]:
    """The recorded outputs of a finished stage that are gone or damaged, each with why."""
    missing = []
    for key in result.outputs:
        recorded = getattr(result, key)
        if recorded:
            path = Path(recorded) if Path(recorded).is_absolute() else run_dir / recorded
            problem = "is gone" if not path.exists() else _damaged_model_files(path)
            if problem:
                missing.append(f"{path} {problem}")
    return missing


def _damaged_model_files(path: Path) -> str | None:
    """Why a model folder cannot be loaded back (a truncated or garbled weights or JSON file), or None.

    Reading a safetensors header is enough: safetensors refuses one that does not cover the file."""
    if not path.is_dir():
        return None
    from safetensors import safe_open

    for weights in sorted(path.glob("*.safetensors")):
        try:
            with safe_open(str(weights), framework="pt") as handle:
                handle.keys()
        except Exception as exc:  # noqa: BLE001 - SafetensorError, OSError
            return f"holds an unreadable {weights.name} ({first_line(exc)})"
    for config in sorted(path.glob("*.json")):
        try:
            json.loads(config.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            return f"holds an unreadable {config.name} ({first_line(exc)})"
    return None


def _check_interrupted(spec: Spec, run_dir: Path, stage: str) -> None:
    """An interrupted stage resumes from its checkpoints only under the spec that started it:
    continuing them under another would mix two runs in one result."""
    started_path = run_dir / stage / STARTED
    if not started_path.exists():
        return
    try:
        started = json.loads(started_path.read_text(encoding="utf-8"))
        fingerprint = started["fingerprint"]
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
        raise StageStateError(f"{started_path} is unreadable ({first_line(exc)}); run.resume=false starts stage '{stage}' over") from None
    if fingerprint != stage_fingerprint(spec, stage):
        raise StageMismatch(
            f"stage '{stage}' in {run_dir} was started by a different spec and interrupted ({', '.join(STAGE_DECLS[stage].inputs)} "
            "or an earlier stage's settings changed); use a new run.dir, or run.resume=false to start it over"
        )


@dataclass
class StageState:
    """Where one stage stands in a run directory: `done` (skip it), `redo` (finished, but its
    outputs are gone and redoing it is cheap) or `todo`; `record` is the recorded result if any."""

    status: str
    record: StageRecord | None = None
    detail: str = ""


def stage_state(spec: Spec, run_dir: Path, stage: str) -> StageState:
    """The stage's state; raises StageMismatch / StageStateError for a finished stage that cannot be
    reused, the latter saying how to redo it when its outputs are gone and redoing is not cheap."""
    if not spec.run.resume:
        return StageState("todo")
    done = finished_result(spec, run_dir, stage)
    if done is None:
        _check_interrupted(spec, run_dir, stage)
        return StageState("todo")
    gone = missing_outputs(run_dir, done.result)
    if not gone:
        return StageState("done", done)
    if STAGE_DECLS[stage].redo_when_outputs_gone:
        return StageState("redo", done, gone[0])
    raise StageStateError(
        f"stage '{stage}' in {run_dir} finished, but its output {gone[0]}; to redo the stage delete "
        f"{result_path(run_dir, stage)} and run again (it restarts from {run_dir / stage / 'checkpoints'} when present)"
    )


def plan_stages(spec: Spec, run_dir: Path) -> dict[str, StageState]:
    """stage -> `stage_state` for every stage of the spec, in order (raises as `stage_state` does)."""
    return {stage: stage_state(spec, run_dir, stage) for stage in spec.run.stages}


def check_resumable(spec: Spec, run_dir: Path) -> None:
    """Raise StageMismatch / StageStateError if a finished stage in `run_dir` cannot be reused."""
    plan_stages(spec, run_dir)


def check_inputs(spec: Spec) -> None:
    """What the run reads from outside its directory that can be checked in a moment (the policies
    `eval.from_run` or `eval.model_dir` name): RunError naming the field. A sweep and a submission
    check it before anything is written, so a wrong path is refused at once, not in every job."""
    if "eval" in spec.run.stages:
        from slca.evaluation.stage import named_policies

        named_policies(spec.eval)


def _evaluates(spec: Spec, run_dir: Path) -> bool:
    """Whether this run will still evaluate: an eval stage not done yet, or evaluations during RL."""
    if "eval" in spec.run.stages and stage_state(spec, run_dir, "eval").status != "done":
        return True
    return "rl" in spec.run.stages and spec.train.rl.eval_every_steps > 0


def run_pipeline(
    spec: Spec, run_dir: Path, tracker: Any, *, echo: Callable[[str], None] = print, invocation: int | None = None,
    dry_run: bool = False,
) -> list[StageOutcome]:
    """Run the spec's stages in order; stop at the first stage that is unavailable or fails.

    Each result.json records the `invocation` (its index in provenance.json's history) that produced it."""
    ctx = RunContext(spec=spec, run_dir=run_dir, tracker=tracker, dry_run=dry_run)
    ctx.evaluate = _in_memory_evaluator(ctx)
    outcomes: list[StageOutcome] = []
    if not dry_run and _evaluates(spec, run_dir):
        from slca.evaluation.benchmarks import benchmark_preflight

        benchmark_preflight(spec.eval)  # a benchmark that cannot run is refused before training, not after it
    for stage in spec.run.stages:
        state = stage_state(spec, run_dir, stage)
        if state.status == "done" and state.record is not None:
            ctx.results.add(state.record.result)
            outcomes.append(StageOutcome(stage, "skipped", detail="already done"))
            echo(f"[{stage}] already done, skipped")
            continue
        if state.status == "redo":
            echo(f"[{stage}] finished before, but {state.detail}: redoing it")
        if not spec.run.resume and (run_dir / stage).exists():
            shutil.rmtree(run_dir / stage)  # a fresh start must not pick up this stage's old checkpoints
        for need in STAGE_DECLS[stage].needs:
            if need not in spec.run.stages and not ctx.results.has(need):
                ctx.results.add(WITHOUT_STAGE[need](ctx))
        echo(f"[{stage}] running")
        atomic_write_json(run_dir / stage / STARTED, {"fingerprint": stage_fingerprint(spec, stage), "invocation": invocation})
        start = time.perf_counter()
        try:
            result = _STAGES[stage](ctx)
        except (StageUnavailable, DryRunStop) as exc:
            status = "dry run" if isinstance(exc, DryRunStop) else "unavailable"
            outcomes.append(StageOutcome(stage, status, time.perf_counter() - start, str(exc)))
            echo(f"[{stage}] {exc}")
            break
        seconds = time.perf_counter() - start
        if getattr(result, "stage", None) != stage:  # a stage function's bug, not the user's
            raise TypeError(f"stage '{stage}' returned {type(result).__name__}, not its result type {RESULT_TYPES[stage].__name__}")
        ctx.results.add(result)
        write_result(run_dir, StageRecord(result, stage_fingerprint(spec, stage), invocation))
        outcomes.append(StageOutcome(stage, "done", seconds))
        echo(f"[{stage}] done in {seconds:.1f}s")
    return outcomes
