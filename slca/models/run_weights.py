"""Which weights a stage of a run starts from: the backbone option's own (built on the run's SFT rows
when its kind builds), or the newest policy an earlier stage trained."""

from __future__ import annotations

from slca.models.backbones import backbone_dir
from slca.runcontext import RunContext


def base_model_dir(ctx: RunContext) -> str:
    """The backbone before any training: its model directory, or its hub id."""
    from slca.data.io import read_rows

    return backbone_dir(ctx.spec.backbone, lambda: read_rows(ctx.split_path("sft")))


def policy_dir(ctx: RunContext) -> str:
    """The newest policy: after RL, else after SFT, else the base backbone."""
    for trained in (ctx.results.rl, ctx.results.sft):
        if trained is not None:
            return str(ctx.resolve(trained.model_dir))
    return base_model_dir(ctx)
