"""The `curate` pipeline stage: curate this run's RL split with `train.curate`, so the RL stage
trains on the kept prompts (docs/method.md#offline-prompt-curation).

It runs after `sft` when both are listed, so `train.curate.policy: latest` rolls out with the SFT
checkpoint ("curate the RL split with the SFT checkpoint, then train"); without `sft` it is the
backbone. The outcome cache lives in the stage folder, so an interrupted stage continues.
"""

from __future__ import annotations

from slca.runcontext import RunContext, StageInputError, StageUnavailable
from slca.stage_results import CurateResult


def curate_stage(ctx: RunContext) -> CurateResult:
    from slca.curate.policy import resolve_policy
    from slca.curate.run import FUNNEL_NAME, OUT_NAME, curate_file
    from slca.data.errors import DataInputError
    from slca.data.schemas import DataValidationError
    from slca.models.run_weights import base_model_dir, policy_dir

    spec = ctx.spec
    cfg = spec.train.curate
    if ctx.dry_run:  # rolling out is the work itself: there is nothing to write and stop before
        raise StageUnavailable("dry run: the curate stage rolls the RL prompts out; run without --dry-run to curate")
    folder = ctx.stage_dir("curate")
    source = ctx.split_path("rl")
    try:
        policy = resolve_policy(spec, cfg.policy, backbone_dir=lambda: base_model_dir(ctx), latest=lambda: policy_dir(ctx))
        funnel = curate_file(source, folder / "split", spec=spec, policy=policy, cache_dir=folder / "cache")
    except DataValidationError as exc:
        raise StageInputError(f"train.curate: {source}: {exc}") from None
    except DataInputError as exc:
        raise StageInputError(f"train.curate.policy: {exc}" if str(exc).startswith("--policy") else f"train.curate: {exc}") from None
    if funnel.kept == 0:
        raise StageInputError(
            f"train.curate.keep={cfg.keep} kept none of the {funnel.rows_in} RL prompts (dropped: {funnel.dropped}); "
            f"see {folder / 'split' / FUNNEL_NAME}"
        )
    ctx.tracker.summary({"curate/rows_in": funnel.rows_in, "curate/kept": funnel.kept,
                         **{f"curate/dropped/{k}": v for k, v in funnel.dropped.items()}})
    print(f"[curate] kept {funnel.kept} of {funnel.rows_in} RL prompts ({cfg.keep}, {cfg.rollouts} rollouts each, policy {policy.label})")
    return CurateResult(
        rl=ctx.relative(folder / "split" / OUT_NAME),
        funnel=ctx.relative(folder / "split" / FUNNEL_NAME),
        rows_in=funnel.rows_in,
        kept=funnel.kept,
        dropped=funnel.dropped,
        histogram=funnel.histogram,
        generator_calls=funnel.generator_calls,
        seconds=funnel.seconds,
    )


STAGES = {"curate": curate_stage}
