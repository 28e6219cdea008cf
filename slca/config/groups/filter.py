"""`filter` group: which prompts are sampled or kept for an update."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

from pydantic import Field

from slca.config.base import SlcaModel
from slca.config.limits import MAX_EPOCHS
from slca.config.options import Options


# An option's `backend_settings`: backend -> "module:function" `(spec) -> dict` of that backend's own
# settings for it (verl's config keys), named, not imported, so this layer imports no backend; verl
# refuses an option that names none.
FILTER_OPTIONS = Options("filter")


@FILTER_OPTIONS.add
class NoFilter(SlcaModel):
    """Every prompt is rolled out every epoch."""

    name: Literal["none"] = Field("none", description="Option name.")
    backend_settings: ClassVar[Mapping[str, str]] = {"verl": "slca.backends.verl.efficiency:no_settings"}


@FILTER_OPTIONS.add
class PreRolloutFilter(SlcaModel):
    """Skip prompts all-correct for k consecutive epochs (efficiency paper, eq. 4-6)."""

    name: Literal["pre_rollout"] = Field("pre_rollout", description="Option name.")
    backend_settings: ClassVar[Mapping[str, str]] = {"verl": "slca.backends.verl.efficiency:pre_rollout_settings"}
    k: int = Field(1, ge=1, le=MAX_EPOCHS, description="Consecutive all-correct epochs after which a prompt is skipped.")
    correct_threshold: float | None = Field(
        None, ge=0.0, le=1.0, description="A rollout is correct when its normalised reward (in [0, 1]) reaches this; null uses the reward's own success rule."
    )
    skip_all_wrong: bool = Field(False, description="Also skip prompts all-wrong for k consecutive epochs (beyond the paper).")
    readmit_every: int | None = Field(None, ge=1, le=MAX_EPOCHS, description="Re-admit skipped prompts every R epochs; null never re-admits.")


@FILTER_OPTIONS.add
class DynamicSamplingFilter(SlcaModel):
    """Drop zero-variance groups after generation and refill the batch (DAPO-style)."""

    name: Literal["dynamic_sampling"] = Field("dynamic_sampling", description="Option name.")
    backend_settings: ClassVar[Mapping[str, str]] = {"verl": "slca.backends.verl.efficiency:dynamic_sampling_settings"}
    max_generation_rounds: int = Field(4, ge=1, le=100, description="Generation rounds at most to fill one batch.")


# The union is built from the registered options when first imported (slca/config/options.py).
__getattr__ = FILTER_OPTIONS.module_getattr(__name__, "FilterConfig")
