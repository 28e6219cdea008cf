"""`backend` group: which engine executes the training stages."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from slca.config.base import RuleViolation, SlcaModel
from slca.config.limits import MAX_GPUS_PER_NODE, MAX_NODES, MAX_SEQUENCES_PER_STEP, MAX_STEPS, MAX_WORKERS
from slca.config.options import Options


BACKEND_OPTIONS = Options("backend")


@BACKEND_OPTIONS.add
class LocalBackend(SlcaModel):
    """Embedded trainer: SFT and RL in-process on the CPU or one GPU."""

    name: Literal["local"] = Field("local", description="Option name.")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="Device; `auto` picks cuda when available.")
    num_threads: int | None = Field(None, ge=1, le=MAX_WORKERS, description="torch intra-op threads; null keeps torch's default.")


@BACKEND_OPTIONS.add
class VerlBackend(SlcaModel):
    """verl (0.9.1) PPO trainer with vLLM rollouts; RL stage only."""

    name: Literal["verl"] = Field("verl", description="Option name.")
    device: Literal["cuda", "cpu"] = Field("cuda", description="cuda: GPUs and the rollout_engine; cpu: slca's CPU platform and transformers rollout (tests, debugging a spec on a laptop).")
    nnodes: int = Field(1, ge=1, le=MAX_NODES, description="Nodes in the Ray cluster.")
    n_gpus_per_node: int = Field(8, ge=1, le=MAX_GPUS_PER_NODE, description="GPUs per node.")
    rollout_engine: Literal["vllm", "sglang"] = Field("vllm", description="Rollout engine.")
    gpu_memory_utilization: float = Field(0.82, gt=0, le=1, description="vLLM GPU memory fraction.")
    max_num_seqs: int = Field(32, ge=1, le=MAX_SEQUENCES_PER_STEP, description="vLLM concurrent sequences.")
    ppo_micro_batch_size_per_gpu: int = Field(1, ge=1, le=MAX_SEQUENCES_PER_STEP, description="Actor micro batch per GPU; must divide the rollouts each GPU gets from a PPO mini-batch.")
    log_prob_micro_batch_size_per_gpu: int = Field(8, ge=1, le=MAX_SEQUENCES_PER_STEP, description="Micro batch for rollout/ref log-probs; must divide the rollouts each GPU scores a step.")
    agent_num_workers: int = Field(32, ge=1, le=MAX_WORKERS, description="Agent-loop workers.")
    save_freq: int = Field(10, le=MAX_STEPS, description="Checkpoint every N steps (-1: never; 0 is not allowed).")
    test_freq: int = Field(10, le=MAX_STEPS, description="Validate every N steps (-1: never; 0 is not allowed).")
    val_before_train: bool = Field(True, description="Validate once before training.")
    overrides: list[str] = Field(default_factory=list, description="Extra verl override strings (`key=value`, `+key=value`), applied last and checked against verl's own config.")

    @field_validator("save_freq", "test_freq")
    @classmethod
    def _every_or_never(cls, value: int) -> int:
        if value == 0 or value < -1:
            raise RuleViolation("", f"{value} is neither -1 (never) nor a step count >= 1")
        return value


@BACKEND_OPTIONS.add
class LlamaFactoryBackend(SlcaModel):
    """LLaMA-Factory (0.9.5) full fine-tuning for the SFT stage, run from its own environment."""

    name: Literal["llamafactory"] = Field("llamafactory", description="Option name.")
    executable: str = Field(
        ".cache/llamafactory-env/bin/llamafactory-cli", description="llamafactory-cli of LLaMA-Factory's own environment (`make llamafactory-env` builds it)."
    )
    template: str | None = Field(None, description="LLaMA-Factory template; null takes the backbone's chat_template (`qwen` for the tiny backbone).")
    deepspeed: str | None = Field(None, description="DeepSpeed preset (ds_z2, ds_z3) or a config path; null disables it.")
    flash_attn: Literal["auto", "fa2", "sdpa", "disabled"] = Field("auto", description="Attention implementation.")
    precision: Literal["bf16", "fp16", "fp32"] = Field("fp32", description="Training precision (bf16 on GPUs that have it).")
    nproc_per_node: int = Field(1, ge=1, le=MAX_GPUS_PER_NODE, description="GPUs used by torchrun (1: a plain process, no torchrun).")
    logging_steps: int = Field(1, ge=1, le=MAX_STEPS, description="Optimiser steps between loss records read back into metrics.jsonl.")
    overrides: dict[str, Any] = Field(default_factory=dict, description="Extra LLaMA-Factory arguments, applied last.")


# The union is built from the registered options when first imported (slca/config/options.py).
__getattr__ = BACKEND_OPTIONS.module_getattr(__name__, "BackendConfig")
