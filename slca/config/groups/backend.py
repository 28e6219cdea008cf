"""`backend` group: which engine executes the training stages."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field

from slca.config.base import SlcaModel


class LocalBackend(SlcaModel):
    """Embedded trainer: SFT and RL in-process on the CPU or one GPU."""

    name: Literal["local"] = Field("local", description="Option name.")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="Device; `auto` picks cuda when available.")
    num_threads: int | None = Field(None, ge=1, description="torch intra-op threads; null keeps torch's default.")
    dtype: Literal["float32", "bfloat16"] = Field("float32", description="Training dtype.")


class VerlBackend(SlcaModel):
    """verl (0.9.1) PPO trainer with vLLM rollouts; RL stage only."""

    name: Literal["verl"] = Field("verl", description="Option name.")
    nnodes: int = Field(1, ge=1, description="Nodes in the Ray cluster.")
    n_gpus_per_node: int = Field(8, ge=1, description="GPUs per node.")
    rollout_engine: Literal["vllm", "sglang"] = Field("vllm", description="Rollout engine.")
    gpu_memory_utilization: float = Field(0.82, gt=0, le=1, description="vLLM GPU memory fraction.")
    max_num_seqs: int = Field(32, ge=1, description="vLLM concurrent sequences.")
    ppo_micro_batch_size_per_gpu: int = Field(1, ge=1, description="Actor micro batch per GPU.")
    log_prob_micro_batch_size_per_gpu: int = Field(128, ge=1, description="Micro batch for rollout/ref log-probs.")
    agent_num_workers: int = Field(32, ge=1, description="Agent-loop workers.")
    save_freq: int = Field(10, description="Checkpoint every N steps (-1: never).")
    test_freq: int = Field(10, description="Validate every N steps (-1: never).")
    val_before_train: bool = Field(True, description="Validate once before training.")
    overrides: dict[str, Any] = Field(default_factory=dict, description="Extra verl dotted overrides, validated against verl's own config.")


class LlamaFactoryBackend(SlcaModel):
    """LLaMA-Factory full fine-tuning for the SFT stage."""

    name: Literal["llamafactory"] = Field("llamafactory", description="Option name.")
    template: str | None = Field(None, description="LLaMA-Factory template; null takes the backbone's chat_template.")
    deepspeed: str | None = Field("ds_z2", description="DeepSpeed preset (ds_z2, ds_z3) or a config path; null disables it.")
    flash_attn: Literal["auto", "fa2", "sdpa", "disabled"] = Field("fa2", description="Attention implementation.")
    nproc_per_node: int = Field(8, ge=1, description="GPUs used by torchrun.")
    overrides: dict[str, Any] = Field(default_factory=dict, description="Extra LLaMA-Factory arguments.")


BackendConfig = Annotated[Union[LocalBackend, VerlBackend, LlamaFactoryBackend], Field(discriminator="name")]
