"""The local backend's contract: SFT and RL in this process (CPU or one GPU); every field honoured."""

from __future__ import annotations

from typing import TYPE_CHECKING

from slca.backends.contract import SHARED_SECTIONS, Backend, register_backend, trained
from slca.config.base import RuleViolation

if TYPE_CHECKING:
    from slca.config.spec import Spec


def rules(spec: Spec) -> None:
    """The embedded trainer feeds prompt + response through the backbone in one sequence."""
    rl = spec.train.rl
    total = rl.max_prompt_length + rl.max_response_length
    if total > spec.backbone.max_position_embeddings:
        raise RuleViolation(
            "train.rl.max_response_length",
            f"max_prompt_length + max_response_length = {total} exceeds backbone.max_position_embeddings={spec.backbone.max_position_embeddings}",
        )


BACKEND = register_backend(Backend(
    name="local",
    stages={"sft": "slca.backends.local.stages:sft_stage", "rl": "slca.backends.local.stages:rl_stage"},
    honours=(*SHARED_SECTIONS, *trained(("train.sft", "train.rl", "filter"))),
    rules=rules,
))
