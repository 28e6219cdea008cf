"""The `eval` pipeline stage (what `slca eval` runs too): evaluate policies side by side, each
result with its protocol card, into eval/results.json and eval/table.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slca.models.run_weights import base_model_dir
from slca.runcontext import RunContext, RunError
from slca.stage_results import EvalResult, ResultFileError, StageResults, trained_policies


def _trained(run_dir: Path, results: StageResults | None) -> list[tuple[str, str]]:
    """(stage, model directory) of the sft and rl policies a run recorded, oldest first; `results`
    None reads them from the run directory (another run's, for eval.from_run)."""
    if results is None:
        try:
            results = trained_policies(run_dir)
        except ResultFileError as exc:
            raise RunError(f"eval.from_run: {exc}") from None
    trained = (("sft", results.sft), ("rl", results.rl))
    return [(stage, str(run_dir / result.model_dir)) for stage, result in trained if result is not None]


def named_policies(cfg: Any) -> list[tuple[str, str]]:
    """(label, model directory) of the policies `eval.model_dir` or `eval.from_run` names, [] when they
    name none; RunError naming the field when what they name is not there. Cheap (a few file reads):
    a sweep or a submission checks it before anything is written."""
    if cfg.model_dir:
        if not Path(cfg.model_dir).is_dir():
            raise RunError(f"eval.model_dir: not a directory: {cfg.model_dir}")
        return [("model", cfg.model_dir)]
    if cfg.from_run:
        source = Path(cfg.from_run)
        if not (source / "spec.yaml").is_file():
            raise RunError(f"eval.from_run: {source} is not a run directory (no spec.yaml)")
        targets = _trained(source, None)
        if not targets:
            raise RunError(f"eval.from_run: {source} holds no trained policy (its sft and rl stages have not finished)")
        return targets
    return []


def eval_targets(ctx: RunContext) -> list[tuple[str, str]]:
    """(label, model directory) of each policy to evaluate: eval.model_dir, else eval.from_run's
    trained policies, else this run's, else the untrained backbone."""
    named = named_policies(ctx.spec.eval)
    if named:
        return named
    targets = _trained(ctx.run_dir, ctx.results)
    if targets:
        return targets
    return [("backbone", base_model_dir(ctx))]


def _split_path(ctx: RunContext) -> Path | None:
    try:
        return ctx.split_path(ctx.spec.eval.split)
    except KeyError:  # no data stage: a benchmark that needs the split says so itself
        return None


def evaluate_in_memory(ctx: RunContext, model: Any, tokenizer: Any, step: int) -> dict[str, float]:
    """Headline metrics (first protocol cell, mean over its seeds) of a policy being trained.

    The policy lives in this process, so it is sampled with the `hf` generator whatever eval.generator says."""
    from slca.evaluation.benchmarks import benchmark_preflight
    from slca.evaluation.run import evaluate_model
    from slca.rollout import get_generator

    cfg = ctx.spec.eval
    benchmark_preflight(cfg)
    first = cfg.model_copy(update={"constructions": cfg.constructions[:1], "thinking": cfg.thinking[:1], "system_prompts": cfg.system_prompts[:1], "generator": "hf"})
    spec = ctx.spec.model_copy(update={"eval": first})
    was_training = model.training
    model.eval()
    try:
        generator = get_generator("hf")(model, pad_token_id=tokenizer.pad_token_id)
        result = evaluate_model(spec, label=f"step {step}", model_dir=f"<in memory, step {step}>", generator=generator, tokenizer=tokenizer,
                                split_path=_split_path(ctx), device=next(model.parameters()).device, progress=False)
    finally:
        model.train(was_training)
    return {f"eval/{name}": value.mean for name, value in result.cells[0].metrics.items()}


def eval_stage(ctx: RunContext) -> EvalResult:
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    from slca.device import select_device
    from slca.evaluation.benchmarks import benchmark_preflight, get_benchmark
    from slca.evaluation.generators import build_generator
    from slca.evaluation.harness import effective_seeds, finite_or_null
    from slca.evaluation.report import print_tables, write_results
    from slca.evaluation.run import evaluate_model

    spec = ctx.spec
    benchmark_preflight(spec.eval)  # before any model loads: a benchmark that cannot run is refused, not scored 0
    hf_logging.disable_progress_bar()
    device = select_device(getattr(spec.backend, "device", "auto"), getattr(spec.backend, "num_threads", None))
    note = effective_seeds(spec.eval)[1]
    if note:
        print(note)
    results = []
    for label, model_dir in eval_targets(ctx):
        tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        # A benchmark that loads the directory itself (lm_eval) would leave a second copy of the model unused.
        self_loading = getattr(get_benchmark(spec.eval.benchmark), "loads_model_itself", False)
        generator = None if self_loading else build_generator(spec.eval, model_dir, tokenizer, device)
        print(f"[eval] {label}: {model_dir} ({spec.eval.generator}, benchmark {spec.eval.benchmark})")
        results.append(evaluate_model(spec, label=label, model_dir=model_dir, generator=generator, tokenizer=tokenizer,
                                      split_path=_split_path(ctx), device=device))
    record, table = write_results(ctx.stage_dir("eval"), results)
    print_tables(results, table)
    print(f"[eval] wrote {table} and {record}")
    # JSON has no NaN: a metric the first cell did not measure is null in eval/result.json and metrics.jsonl.
    headline = {f"{r.label}/{name}": finite_or_null(value.mean) for r in results for name, value in r.cells[0].metrics.items()}
    ctx.tracker.summary({f"eval/{k}": v for k, v in headline.items()})
    return EvalResult(results=ctx.relative(record), table=ctx.relative(table), headline=headline)


STAGES = {"eval": eval_stage}
