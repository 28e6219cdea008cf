"""The local backend's pipeline stages: SFT and RL in this process (CPU or one GPU)."""

from __future__ import annotations

from typing import Any

from slca.device import select_device
from slca.models.run_weights import base_model_dir, policy_dir
from slca.runcontext import RunContext
from slca.stage_results import RlResult, SftResult


def _device(spec: Any) -> Any:
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # slca draws its own progress bars; keep the log readable
    return select_device(spec.backend.device, spec.backend.num_threads)


def read_split(ctx: RunContext, split: str, limit: int | None = None) -> list[dict[str, Any]]:
    """Rows of one split (sft, rl or eval) as the data stage, or the curate stage for rl, recorded it."""
    from slca.data.io import read_rows

    path = ctx.split_path(split)
    rows = []
    for row in read_rows(path):
        rows.append(row)
        if limit is not None and len(rows) >= limit:
            break
    return rows


def sft_stage(ctx: RunContext) -> SftResult:
    """Supervised warm-start on the SFT split; resumes from the stage's checkpoints."""
    from slca.backends.local.sft import run_sft
    from slca.models.load import load_backbone

    spec = ctx.spec
    device = _device(spec)
    model, tokenizer = load_backbone(base_model_dir(ctx), device=device)
    rows = read_split(ctx, "sft", limit=spec.train.sft.max_rows)
    summary = run_sft(
        model,
        tokenizer,
        rows,
        spec.train.sft,
        ctx.stage_dir("sft"),
        seed=spec.run.seed,
        device=device,
        on_step=_sft_logger(ctx),
    )
    details = {k: v for k, v in summary.items() if k != "model_dir" and (isinstance(v, (int, float, str, bool)) or v is None)}
    return SftResult(model_dir=ctx.relative(summary["model_dir"]), details=details)


def _sft_logger(ctx: RunContext) -> Any:
    """Log SFT steps; the first step of this attempt first drops what an interrupted attempt logged
    from that step on (it resumed from an earlier checkpoint), so no step appears twice."""
    first = [True]

    def log(metrics: dict[str, Any]) -> None:
        if first[0]:
            first_step = int(metrics["step"])
            ctx.tracker.rewind(lambda r: r.get("stage") == "sft" and _step(r) >= first_step)
            first[0] = False
        ctx.tracker.log(metrics, step=int(metrics["step"]), stage="sft")

    return log


def _step(record: dict[str, Any]) -> int:
    step = record.get("step")
    return step if isinstance(step, int) else -1


def rl_stage(ctx: RunContext) -> RlResult:
    """Policy-gradient training with the configured estimator, filter and down-sampling."""
    import time

    from slca.backends.local.rl import LocalRlTrainer
    from slca.backends.local.rollouts import make_rollout_fn
    from slca.fileio import atomic_write_json
    from slca.models.load import load_backbone
    from slca.terminal import progress_bar

    spec = ctx.spec
    device = _device(spec)
    model, tokenizer = load_backbone(policy_dir(ctx), device=device)
    rows = read_split(ctx, "rl")
    out = ctx.stage_dir("rl")
    trainer = LocalRlTrainer(
        spec,
        model,
        tokenizer,
        rows,
        out,
        rollout_fn=make_rollout_fn(spec, model, tokenizer, device),
        device=device,
        log=lambda m, step: ctx.tracker.log(m, step=step, stage="rl"),
    )
    resumed = trainer.try_resume()
    # What an interrupted attempt logged after its last checkpoint is redone now: drop those lines. The
    # filter's epoch-end record at the checkpoint's step is written when the next step starts, so after it.
    at = trainer.progress.step if resumed else -1
    ctx.tracker.rewind(lambda r: r.get("stage") in ("rl", "rl_eval")
                       and (_step(r) > at or (_step(r) == at and any(str(k).startswith("filter/") for k in r))))
    total = trainer.total_steps()
    start = time.perf_counter()
    history: list[dict[str, Any]] = []

    eval_every = spec.train.rl.eval_every_steps
    train_s = 0.0  # training wall time without the periodic evaluations

    def periodic_eval() -> None:
        if eval_every and ctx.evaluate is not None and trainer.progress.step % eval_every == 0:
            metrics = {**ctx.evaluate(model, tokenizer, trainer.progress.step), "train_s": train_s}
            ctx.tracker.log(metrics, step=trainer.progress.step, stage="rl_eval")

    if not resumed:  # a checkpoint is written after its step's evaluation: redoing it would log it twice
        periodic_eval()
    with progress_bar() as bar:
        task = bar.add_task("RL", total=total, completed=trainer.progress.step)
        while trainer.progress.step < total:
            step_start = time.perf_counter()
            metrics = trainer.step()
            if trainer.exhausted:
                print(f"[rl] stopped at step {trainer.progress.step}: the prompt filter left nothing to train on")
                break
            train_s += time.perf_counter() - step_start
            ctx.tracker.log(metrics, step=trainer.progress.step, stage="rl")
            periodic_eval()
            history.append(metrics)
            bar.update(task, completed=trainer.progress.step, description=f"RL reward {metrics.get('reward/norm_mean', float('nan')):.3f}")
            every = spec.train.rl.save_every_steps
            if every and trainer.progress.step % every == 0 and trainer.progress.step < total:
                trainer.save()
    model_dir = out / "model"
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    summary = {
        "model_dir": ctx.relative(model_dir),
        "steps": trainer.progress.step,
        "resumed": resumed,
        "stopped_early": trainer.exhausted,
        "wall_s": time.perf_counter() - start,
        "train_s": train_s,
    }
    if history:
        for key in ("reward/norm_mean", "reward/success_rate", "groups/informative_frac"):
            summary[f"final/{key}"] = history[-1].get(key)
        informative = [h["groups/informative_frac"] for h in history if "groups/informative_frac" in h]
        summary["mean_informative_frac"] = sum(informative) / len(informative) if informative else 0.0
    atomic_write_json(out / "summary.json", summary)
    return RlResult(model_dir=summary.pop("model_dir"), details=summary)

