"""Training hyperparameters shared by every backend (the `train` node of the spec, set by experiments)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from slca.config.base import RuleViolation, SlcaModel, system_prompt_choice
from slca.config.groups.curate import CurateConfig
from slca.config.limits import (
    MAX_CONTEXT_TOKENS,
    MAX_EPOCHS,
    MAX_GRAD_CLIP,
    MAX_GROUP_SIZE,
    MAX_LR,
    MAX_ROWS,
    MAX_SEQUENCES_PER_STEP,
    MAX_STEPS,
    MAX_TEMPERATURE,
    MAX_TURNS,
    MAX_WEIGHT,
    MAX_WEIGHT_DECAY,
)


class SftConfig(SlcaModel):
    """Supervised warm-start on the SFT split; loss on assistant tokens only."""

    epochs: float = Field(2.0, gt=0, le=MAX_EPOCHS, description="Passes over the SFT split.")
    batch_size: int = Field(32, ge=1, le=MAX_SEQUENCES_PER_STEP, description="Conversations per optimiser step (after accumulation).")
    micro_batch_size: int = Field(16, ge=1, le=MAX_SEQUENCES_PER_STEP, description="Conversations per forward pass.")
    lr: float = Field(5e-6, gt=0, le=MAX_LR, description="Peak learning rate.")
    warmup_ratio: float = Field(0.1, ge=0, lt=1, description="Fraction of steps with linear warm-up.")
    scheduler: Literal["cosine", "constant"] = Field("cosine", description="Learning-rate schedule after warm-up.")
    weight_decay: float = Field(0.0, ge=0, le=MAX_WEIGHT_DECAY, description="AdamW weight decay.")
    max_length: int = Field(16384, ge=16, le=MAX_CONTEXT_TOKENS, description="Tokens per conversation at most (cutoff_len); longer rows are truncated and counted.")
    max_rows: int | None = Field(None, ge=1, le=MAX_ROWS, description="Use only the first N SFT rows; null uses all.")
    save_every_steps: int = Field(0, ge=0, le=MAX_STEPS, description="Checkpoint every N optimiser steps (0: only at epoch ends).")
    grad_clip: float = Field(1.0, gt=0, le=MAX_GRAD_CLIP, description="Gradient-norm clip.")
    keep_checkpoints: int = Field(2, ge=1, le=1000, description="Keep only the newest N checkpoints.")

    @model_validator(mode="after")
    def _micro_within_batch(self) -> SftConfig:
        if self.micro_batch_size > self.batch_size:
            raise RuleViolation("micro_batch_size", f"{self.micro_batch_size} exceeds train.sft.batch_size={self.batch_size}")
        return self


class RlConfig(SlcaModel):
    """Policy-gradient stage: rollouts, rewards, advantages and the clipped PPO update."""

    epochs: int = Field(1, ge=1, le=MAX_EPOCHS, description="Passes over the RL prompts.")
    max_steps: int | None = Field(None, ge=1, le=MAX_STEPS, description="Stop after this many RL steps; null runs all epochs.")
    prompts_per_step: int = Field(128, ge=1, le=MAX_SEQUENCES_PER_STEP, description=f"Prompts per RL step (train_batch_size); prompts_per_step x n is at most {MAX_SEQUENCES_PER_STEP} rollouts.")
    n: int = Field(16, ge=1, le=MAX_GROUP_SIZE, description=f"Rollouts per prompt (group size); prompts_per_step x n is at most {MAX_SEQUENCES_PER_STEP} rollouts.")
    mini_batch_prompts: int = Field(32, ge=1, le=MAX_SEQUENCES_PER_STEP, description="Prompts per optimiser step (ppo_mini_batch_size), at most prompts_per_step.")
    # Caps far past where the update stops changing: 100 passes over a step, a ratio clip at 11, a dual clip at 100.
    ppo_epochs: int = Field(1, ge=1, le=100, description="Passes over each step's rollouts.")
    lr: float = Field(1e-6, gt=0, le=MAX_LR, description="Actor learning rate (constant).")
    weight_decay: float = Field(0.01, ge=0, le=MAX_WEIGHT_DECAY, description="AdamW weight decay.")
    grad_clip: float = Field(1.0, gt=0, le=MAX_GRAD_CLIP, description="Gradient-norm clip.")
    clip_low: float = Field(0.2, ge=0, lt=1, description="PPO ratio clip below 1, in [0, 1).")
    clip_high: float = Field(0.2, ge=0, le=10, description="PPO ratio clip above 1 (clip-higher when larger than clip_low).")
    dual_clip: float | None = Field(3.0, gt=1, le=100, description="Dual-clip bound c for negative advantages; null disables it.")
    loss_agg_mode: Literal["token-mean", "seq-mean-token-sum-norm", "seq-mean-token-mean"] = Field(
        "token-mean", description="How token losses aggregate into the batch loss."
    )
    use_kl_loss: bool = Field(True, description="Add a KL loss to a frozen reference policy.")
    kl_coef: float = Field(0.001, ge=0, le=MAX_WEIGHT, description="KL loss coefficient.")
    kl_type: Literal["low_var_kl", "kl", "mse"] = Field("low_var_kl", description="KL estimator.")
    entropy_coeff: float = Field(0.0, ge=0, le=MAX_WEIGHT, description="Entropy bonus coefficient, >= 0.")
    temperature: float = Field(1.0, gt=0, le=MAX_TEMPERATURE, description="Rollout sampling temperature.")
    top_p: float = Field(1.0, gt=0, le=1, description="Rollout nucleus mass.")
    max_prompt_length: int = Field(24576, ge=16, le=MAX_CONTEXT_TOKENS, description="Prompt tokens at most; longer prompts are filtered and counted.")
    max_response_length: int = Field(8192, ge=8, le=MAX_CONTEXT_TOKENS, description="Multi-turn response tokens at most, observations included.")
    max_assistant_turns: int = Field(10, ge=1, le=MAX_TURNS, description="Assistant turns per rollout at most.")
    max_tool_rounds: int = Field(6, ge=0, le=MAX_TURNS, description="Tool-response rounds per rollout at most.")
    max_parallel_calls: int = Field(20, ge=1, le=MAX_TURNS, description="Calls executed per turn at most; extra calls are counted, not run.")
    system_prompt: str = Field(
        "dataset_template",
        description="Rollout system prompt: dataset_template (the row's text less its tools block, tools rendered by the chat template: what SFT trains on), dataset, bfcl_default, stronger, none or a file.",
    )
    grad_cosine: bool = Field(False, description="Log the cosine between tool-only and summary-only policy gradients (docs/method.md#gradient-cosine-probe).")
    save_every_steps: int = Field(10, ge=0, le=MAX_STEPS, description="Checkpoint every N RL steps (0: only at the end).")
    eval_every_steps: int = Field(0, ge=0, le=MAX_STEPS, description="Evaluate every N RL steps (0: only after training).")

    @field_validator("system_prompt")
    @classmethod
    def _known_prompt(cls, value: str) -> str:
        return system_prompt_choice(value)

    @model_validator(mode="after")
    def _mini_batch_within_step(self) -> RlConfig:
        if self.mini_batch_prompts > self.prompts_per_step:
            raise RuleViolation("mini_batch_prompts", f"{self.mini_batch_prompts} exceeds train.rl.prompts_per_step={self.prompts_per_step}")
        # Every rollout of a step is held in memory at once (token ids, masks, rewards, advantages).
        if self.prompts_per_step * self.n > MAX_SEQUENCES_PER_STEP:
            raise RuleViolation(
                "n", f"{self.n} rollouts x train.rl.prompts_per_step={self.prompts_per_step} = {self.prompts_per_step * self.n} per step, over the {MAX_SEQUENCES_PER_STEP} a step may hold"
            )
        return self


class TrainConfig(SlcaModel):
    """SFT and RL hyperparameters."""

    renamed_fields = {"filter": "curate"}

    sft: SftConfig = Field(default_factory=SftConfig, description="SFT stage.")
    rl: RlConfig = Field(default_factory=RlConfig, description="RL stage.")
    curate: CurateConfig = Field(default_factory=CurateConfig, description="The curate stage: offline rollout-based prompt selection (docs/method.md#offline-prompt-curation).")
