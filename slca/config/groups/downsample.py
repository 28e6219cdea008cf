"""`downsample` group: update on m of the n rollouts per prompt."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field

from slca.config.base import SlcaModel


class NoDownsample(SlcaModel):
    """Update on all n rollouts."""

    name: Literal["none"] = Field("none", description="Option name.")


class MaxVarianceDownsample(SlcaModel):
    """Keep the m rollouts maximising reward variance (PODS, Xu et al. 2025)."""

    name: Literal["max_variance"] = Field("max_variance", description="Option name.")
    m: int | None = Field(None, ge=2, description="Rollouts kept per prompt; null keeps half of train.rl.n (the paper's m = n/2).")
    reward: Literal["total", "tool", "summary", "segment_sum"] = Field(
        "total", description="Reward that drives the choice; `segment_sum` maximises tool + summary variance."
    )


class RandomDownsample(SlcaModel):
    """Keep m rollouts uniformly at random: the control for max_variance."""

    name: Literal["random"] = Field("random", description="Option name.")
    m: int | None = Field(None, ge=1, description="Rollouts kept per prompt; null keeps half of train.rl.n.")
    seed: int = Field(0, description="Seed of the choice.")


DownsampleConfig = Annotated[Union[NoDownsample, MaxVarianceDownsample, RandomDownsample], Field(discriminator="name")]
