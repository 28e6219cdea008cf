"""The `eval` pipeline stage: evaluate the run's trained policies side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slca.runcontext import RunContext

STAGES_EVALUATED = ("sft", "rl")


def eval_targets(ctx: RunContext) -> list[tuple[str, str]]:
    """(label, model directory) of each policy to evaluate, oldest first."""
    if ctx.spec.eval.model_dir:
        return [("model", ctx.spec.eval.model_dir)]
    targets = [
        (stage, str(ctx.resolve(ctx.results[stage]["model_dir"]))) for stage in STAGES_EVALUATED if ctx.results.get(stage, {}).get("model_dir")
    ]
    if not targets:
        raise ValueError("eval: no trained policy in this run (run the sft or rl stage first, or set eval.model_dir)")
    return targets


def _evaluate_policy(ctx: RunContext, generator: Any, tokenizer: Any, *, progress: bool = True) -> list[Any]:
    from slca.data.io import read_rows
    from slca.evaluation.harness import evaluate
    from slca.rollout import RolloutConfig
    from slca.sim import build_simulator

    spec = ctx.spec
    rows = list(read_rows(ctx.resolve(ctx.results["data"][spec.eval.split])))
    return evaluate(
        rows,
        generator=generator,
        simulator=build_simulator(spec.simulator),
        tokenizer=tokenizer,
        eval_cfg=spec.eval,
        rollout_cfg=RolloutConfig.from_rl(spec.train.rl),
        reward_cfg=spec.reward,
        progress=progress,
    )


def evaluate_in_memory(ctx: RunContext, model: Any, tokenizer: Any, step: int) -> dict[str, float]:
    """Headline metrics (first protocol cell, mean over seeds) of a policy being trained.

    The policy lives in this process, so it is sampled with the `hf` generator whatever eval.generator says."""
    from slca.rollout import get_generator

    was_training = model.training
    model.eval()
    try:
        generator = get_generator("hf")(model, pad_token_id=tokenizer.pad_token_id)
        cells = _evaluate_policy(ctx, generator, tokenizer, progress=False)  # inside the trainer's own bar
    finally:
        model.train(was_training)
    return {f"eval/{name}": value.mean for name, value in cells[0].metrics.items()}


def eval_stage(ctx: RunContext) -> dict[str, Any]:
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    from slca.device import select_device
    from slca.evaluation.generators import build_generator
    from slca.evaluation.report import print_comparison, write_report

    spec = ctx.spec
    hf_logging.disable_progress_bar()
    device = select_device(getattr(spec.backend, "device", "auto"), getattr(spec.backend, "num_threads", None))
    results: dict[str, Any] = {}
    for label, model_dir in eval_targets(ctx):
        tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        generator = build_generator(spec.eval, model_dir, tokenizer, device)
        print(f"[eval] {label}: {model_dir} ({spec.eval.generator})")
        results[label] = _evaluate_policy(ctx, generator, tokenizer)
    report_path = write_report(Path(ctx.stage_dir("eval")) / "report.json", spec, results)
    print_comparison(results)
    headline = {f"{label}/{name}": value.mean for label, cells in results.items() for name, value in cells[0].metrics.items()}
    ctx.tracker.summary({f"eval/{k}": v for k, v in headline.items()})
    return {"report": str(report_path), **headline}


STAGES = {"eval": eval_stage}
