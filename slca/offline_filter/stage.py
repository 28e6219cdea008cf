"""The `filter` pipeline stage: filter this run's RL split with `train.filter`, so the RL stage
trains on the kept prompts (docs/method.md#offline-prompt-filter).

It runs after `sft` when both are listed, so `train.filter.policy: latest` rolls out with the SFT
checkpoint ("filter the RL split with the SFT checkpoint, then train"); without `sft` it is the
backbone. The outcome cache lives in the stage folder, so an interrupted stage continues.
"""

from __future__ import annotations

from slca.runcontext import RunContext, StageInputError, StageUnavailable
from slca.stage_results import FilterResult


def filter_stage(ctx: RunContext) -> FilterResult:
    from slca.data.errors import DataInputError
    from slca.data.schemas import DataValidationError
    from slca.models.run_weights import base_model_dir, policy_dir
    from slca.offline_filter.policy import resolve_policy
    from slca.offline_filter.run import FUNNEL_NAME, OUT_NAME, filter_file

    spec = ctx.spec
    cfg = spec.train.filter
    if ctx.dry_run:  # rolling out is the work itself: there is nothing to write and stop before
        raise StageUnavailable("dry run: the filter stage rolls the RL prompts out; run without --dry-run to filter")
    folder = ctx.stage_dir("filter")
    source = ctx.split_path("rl")
    try:
        policy = resolve_policy(spec, cfg.policy, backbone_dir=lambda: base_model_dir(ctx), latest=lambda: policy_dir(ctx))
        funnel = filter_file(source, folder / "split", spec=spec, policy=policy, cache_dir=folder / "cache")
    except DataValidationError as exc:
        raise StageInputError(f"train.filter: {source}: {exc}") from None
    except DataInputError as exc:
        raise StageInputError(f"train.filter.policy: {exc}" if str(exc).startswith("--policy") else f"train.filter: {exc}") from None
    if funnel.kept == 0:
        raise StageInputError(
            f"train.filter.keep={cfg.keep} kept none of the {funnel.rows_in} RL prompts (dropped: {funnel.dropped}); "
            f"see {folder / 'split' / FUNNEL_NAME}"
        )
    ctx.tracker.summary({"filter/rows_in": funnel.rows_in, "filter/kept": funnel.kept,
                         **{f"filter/dropped/{k}": v for k, v in funnel.dropped.items()}})
    print(f"[filter] kept {funnel.kept} of {funnel.rows_in} RL prompts ({cfg.keep}, {cfg.rollouts} rollouts each, policy {policy.label})")
    return FilterResult(
        rl=ctx.relative(folder / "split" / OUT_NAME),
        funnel=ctx.relative(folder / "split" / FUNNEL_NAME),
        rows_in=funnel.rows_in,
        kept=funnel.kept,
        dropped=funnel.dropped,
        histogram=funnel.histogram,
        generator_calls=funnel.generator_calls,
        seconds=funnel.seconds,
    )


STAGES = {"filter": filter_stage}
