"""`filter` group: which prompts are sampled or kept for an update."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field

from slca.config.base import SlcaModel
from slca.config.limits import MAX_EPOCHS


class NoFilter(SlcaModel):
    """Every prompt is rolled out every epoch."""

    name: Literal["none"] = Field("none", description="Option name.")


class PreRolloutFilter(SlcaModel):
    """Skip prompts all-correct for k consecutive epochs (efficiency paper, eq. 4-6)."""

    name: Literal["pre_rollout"] = Field("pre_rollout", description="Option name.")
    k: int = Field(1, ge=1, le=MAX_EPOCHS, description="Consecutive all-correct epochs after which a prompt is skipped.")
    correct_threshold: float | None = Field(
        None, ge=0.0, le=1.0, description="A rollout is correct when its normalised reward (in [0, 1]) reaches this; null uses the reward's own success rule."
    )
    skip_all_wrong: bool = Field(False, description="Also skip prompts all-wrong for k consecutive epochs (beyond the paper).")
    readmit_every: int | None = Field(None, ge=1, le=MAX_EPOCHS, description="Re-admit skipped prompts every R epochs; null never re-admits.")


class DynamicSamplingFilter(SlcaModel):
    """Drop zero-variance groups after generation and refill the batch (DAPO-style)."""

    name: Literal["dynamic_sampling"] = Field("dynamic_sampling", description="Option name.")
    max_generation_rounds: int = Field(4, ge=1, le=100, description="Generation rounds at most to fill one batch.")


FilterConfig = Annotated[Union[NoFilter, PreRolloutFilter, DynamicSamplingFilter], Field(discriminator="name")]
