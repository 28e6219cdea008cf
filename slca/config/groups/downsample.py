"""`downsample` group: update on m of the n rollouts per prompt."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

from pydantic import Field

from slca.config.base import SlcaModel
from slca.config.limits import MAX_GROUP_SIZE, MAX_SEED
from slca.config.options import Options


# An option's `backend_settings`: backend -> "module:function" `(spec) -> dict` of that backend's own
# settings for it (verl's config keys), named, not imported, so this layer imports no backend; verl
# refuses an option that names none.
DOWNSAMPLE_OPTIONS = Options("downsample")


@DOWNSAMPLE_OPTIONS.add
class NoDownsample(SlcaModel):
    """Update on all n rollouts."""

    name: Literal["none"] = Field("none", description="Option name.")
    backend_settings: ClassVar[Mapping[str, str]] = {"verl": "slca.backends.verl.efficiency:no_settings"}


@DOWNSAMPLE_OPTIONS.add
class MaxVarianceDownsample(SlcaModel):
    """Keep the m rollouts maximising reward variance (PODS, Xu et al. 2025)."""

    name: Literal["max_variance"] = Field("max_variance", description="Option name.")
    backend_settings: ClassVar[Mapping[str, str]] = {"verl": "slca.backends.verl.efficiency:keep_m_settings"}
    m: int | None = Field(None, ge=2, le=MAX_GROUP_SIZE, description="Rollouts kept per prompt, 2 <= m <= train.rl.n; null keeps max(2, n // 2) (the paper's m = n/2), resolved when the spec is composed.")
    reward: Literal["total", "tool", "summary", "segment_sum"] = Field(
        "total", description="Reward that drives the choice; `segment_sum` maximises tool + summary variance."
    )


@DOWNSAMPLE_OPTIONS.add
class RandomDownsample(SlcaModel):
    """Keep m rollouts uniformly at random: the control for max_variance."""

    name: Literal["random"] = Field("random", description="Option name.")
    backend_settings: ClassVar[Mapping[str, str]] = {"verl": "slca.backends.verl.efficiency:keep_m_settings"}
    m: int | None = Field(None, ge=1, le=MAX_GROUP_SIZE, description="Rollouts kept per prompt, m <= train.rl.n; null keeps max(2, n // 2), resolved when the spec is composed.")
    seed: int = Field(0, ge=0, le=MAX_SEED, description="Seed of the choice.")


def kept_per_prompt(n: int) -> int:
    """Rollouts kept of `n` per prompt when `m` is left null: max(2, n // 2) (the paper's m = n/2)."""
    return max(2, n // 2)


# The union is built from the registered options when first imported (slca/config/options.py).
__getattr__ = DOWNSAMPLE_OPTIONS.module_getattr(__name__, "DownsampleConfig")
