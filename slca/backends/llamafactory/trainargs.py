"""Spec → LLaMA-Factory: the train YAML arguments, the DeepSpeed config and the command line (pure).

Every value comes from the spec: model and template from the backbone, batch geometry and schedule
from `train.sft`, precision, attention, DeepSpeed and the GPU count from the backend, reporting from
the logger (W&B runs offline unless the logger says otherwise); `backend.overrides` is applied last.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATASET = "slca_sft"

# ZeRO presets; "auto" lets the HF Trainer fill batch sizes, clipping and precision from the YAML.
_ZERO_STAGES = {"ds_z2": 2, "ds_z3": 3}


def deepspeed_config(preset: str) -> dict[str, Any]:
    """The DeepSpeed JSON for a ZeRO preset (`ds_z2`, `ds_z3`)."""
    stage = _ZERO_STAGES[preset]
    zero: dict[str, Any] = {"stage": stage, "overlap_comm": False, "contiguous_gradients": True,
                            "reduce_bucket_size": 500_000_000}
    if stage == 2:
        zero.update(allgather_partitions=True, allgather_bucket_size=500_000_000, reduce_scatter=True, round_robin_gradients=True)
    else:
        zero.update(sub_group_size=1_000_000_000, stage3_prefetch_bucket_size="auto", stage3_param_persistence_threshold="auto",
                    stage3_max_live_parameters=1_000_000_000, stage3_max_reuse_distance=1_000_000_000,
                    stage3_gather_16bit_weights_on_model_save=True)
    return {
        "train_batch_size": "auto",
        "train_micro_batch_size_per_gpu": "auto",
        "gradient_accumulation_steps": "auto",
        "gradient_clipping": "auto",
        "zero_allow_untested_optimizer": True,
        "fp16": {"enabled": "auto", "loss_scale": 0, "loss_scale_window": 1000, "initial_scale_power": 16, "hysteresis": 2, "min_loss_scale": 1},
        "bf16": {"enabled": "auto"},
        "zero_optimization": zero,
    }


def is_preset(deepspeed: str | None) -> bool:
    return deepspeed in _ZERO_STAGES


@dataclass(frozen=True)
class Paths:
    """Where one SFT stage keeps its inputs and outputs."""

    model: str  # the starting model (a local directory or a hub id)
    dataset_dir: Path  # holds dataset_info.json and the converted split
    output_dir: Path  # LLaMA-Factory's output: checkpoints, trainer_log.jsonl, the final model
    deepspeed: Path | None  # the DeepSpeed JSON, when the spec asks for one


def gradient_accumulation(sft: Any, nproc: int) -> int:
    """Micro-batches per optimiser step so that one step sees `train.sft.batch_size` conversations
    (the spec's rule checks the division at composition)."""
    return max(1, sft.batch_size // (sft.micro_batch_size * nproc))


def train_args(spec: Any, paths: Paths, template: str) -> dict[str, Any]:
    """LLaMA-Factory's `train` arguments for the spec's SFT stage."""
    sft, backend = spec.train.sft, spec.backend
    scheduler = "cosine" if sft.scheduler == "cosine" else ("constant_with_warmup" if sft.warmup_ratio > 0 else "constant")
    args: dict[str, Any] = {
        "model_name_or_path": paths.model,
        "trust_remote_code": False,
        "stage": "sft",
        "do_train": True,
        "finetuning_type": "full",
        "template": template,
        "dataset": DATASET,
        "dataset_dir": str(paths.dataset_dir),
        "cutoff_len": sft.max_length,
        "overwrite_cache": True,
        "output_dir": str(paths.output_dir),
        "overwrite_output_dir": False,  # an interrupted run resumes from its newest checkpoint
        "save_only_model": False,
        "num_train_epochs": float(sft.epochs),
        "learning_rate": sft.lr,
        "lr_scheduler_type": scheduler,
        "warmup_ratio": sft.warmup_ratio,
        "weight_decay": sft.weight_decay,
        "max_grad_norm": sft.grad_clip,
        "per_device_train_batch_size": sft.micro_batch_size,
        "gradient_accumulation_steps": gradient_accumulation(sft, backend.nproc_per_node),
        "seed": spec.run.seed,
        "data_seed": spec.run.seed,
        "flash_attn": backend.flash_attn,
        "bf16": backend.precision == "bf16",
        "fp16": backend.precision == "fp16",
        "logging_steps": backend.logging_steps,
        "plot_loss": False,
        "save_total_limit": sft.keep_checkpoints,
        "report_to": "wandb" if spec.logger.name == "wandb" and spec.logger.mode != "disabled" else "none",
        "run_name": f"{spec.run.name or spec.experiment}-sft",
    }
    if sft.save_every_steps:
        args.update(save_strategy="steps", save_steps=sft.save_every_steps)
    else:
        args["save_strategy"] = "epoch"
    if sft.max_rows is not None:
        args["max_samples"] = sft.max_rows
    if paths.deepspeed is not None:
        args["deepspeed"] = str(paths.deepspeed)
    args.update(backend.overrides)
    return args


def command(spec: Any, executable: str, yaml_path: Path) -> tuple[list[str], dict[str, str]]:
    """(argv, extra environment) for `llamafactory-cli train`.

    Several GPUs go through LLaMA-Factory's own torchrun launcher, which reads its geometry from
    the environment; W&B is configured through its environment variables too (the HF integration
    has no other way in)."""
    env: dict[str, str] = {}
    if spec.backend.nproc_per_node > 1:
        env.update(FORCE_TORCHRUN="1", NNODES="1", NODE_RANK="0", NPROC_PER_NODE=str(spec.backend.nproc_per_node))
    logger = spec.logger
    if logger.name == "wandb" and logger.mode != "disabled":
        env.update(WANDB_MODE=logger.mode, WANDB_PROJECT=logger.project, WANDB_DIR=str(Path(spec.run.dir or ".").resolve()))
        if logger.entity:
            env["WANDB_ENTITY"] = logger.entity
    return [executable, "train", str(yaml_path)], env


def shell_line(argv: list[str], env: dict[str, str]) -> str:
    """The command as one line a user can paste into a shell."""
    return " ".join([*(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items())), *map(shlex.quote, argv)])
