"""`train.curate` node: the curate stage, offline rollout-based prompt selection (docs/method.md#offline-prompt-curation).

Not to be confused with the `filter` group, which decides online, epoch by epoch, which prompts
the RL loop samples: this stage rolls every RL prompt out once, before training, and writes the
split the RL stage then trains on.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from slca.config.base import RuleViolation, SlcaModel
from slca.config.limits import MAX_SEQUENCES_PER_STEP, MAX_TURNS

KeepMode = Literal["mixed", "not_all_correct", "not_all_wrong"]


class CurateConfig(SlcaModel):
    """Roll each RL prompt out `rollouts` times and keep those whose outcome pattern `keep` names."""

    policy: str = Field(
        "latest",
        description="Policy that rolls out: latest (this run's SFT checkpoint, else the backbone), backbone, a model or run directory, or an OpenAI-compatible endpoint URL (settings from eval.endpoint).",
    )
    rollouts: int = Field(8, ge=1, le=1024, description="Rollouts per prompt (k), in [1, 1024].")
    keep: KeepMode = Field("mixed", description="Prompts kept: mixed (some but not all rollouts succeed), not_all_correct, or not_all_wrong.")
    min_turns: int | None = Field(None, ge=0, le=MAX_TURNS, description="Drop prompts with fewer user + assistant messages than this, >= 0; null keeps all.")
    max_turns: int | None = Field(None, ge=0, le=MAX_TURNS, description="Drop prompts with more user + assistant messages than this, >= min_turns; null keeps all.")
    max_gold_calls: int | None = Field(None, ge=0, le=MAX_TURNS, description="Drop prompts whose gold answer needs more calls than this, >= 0; null keeps all.")
    batch_prompts: int = Field(16, ge=1, le=4096, description=f"Prompts rolled out together (each `rollouts` times) per generation batch, in [1, 4096]; rollouts x batch_prompts is at most {MAX_SEQUENCES_PER_STEP}.")

    @field_validator("policy")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise RuleViolation("", "empty; use latest, backbone, a model or run directory, or an endpoint URL")
        return value

    @model_validator(mode="after")
    def _turn_range(self) -> CurateConfig:
        if self.min_turns is not None and self.max_turns is not None and self.min_turns > self.max_turns:
            raise RuleViolation("max_turns", f"{self.max_turns} is below train.curate.min_turns={self.min_turns}")
        # One generation batch holds every rollout of its prompts at once.
        if self.rollouts * self.batch_prompts > MAX_SEQUENCES_PER_STEP:
            raise RuleViolation(
                "batch_prompts",
                f"{self.batch_prompts} prompts x train.curate.rollouts={self.rollouts} = {self.rollouts * self.batch_prompts} sequences per batch, over the {MAX_SEQUENCES_PER_STEP} a batch may hold",
            )
        return self
