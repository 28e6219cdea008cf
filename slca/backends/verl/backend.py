"""The verl backend's contract: RL by verl's own trainer (SFT on the embedded trainer, CPU only); its
dry run composes verl's config into the run directory and prints the launch command.

Importing this module imports no verl: composition reads it for every spec."""

from __future__ import annotations

from typing import TYPE_CHECKING

from slca.backends.contract import SHARED_SECTIONS, Backend, register_backend, trained
from slca.backends.verl.efficiency import settings_target
from slca.config.base import RuleViolation

if TYPE_CHECKING:
    from slca.config.spec import Spec

REFUSES = {
    "train.rl.eval_every_steps": "verl validates every backend.test_freq steps",
    "train.rl.save_every_steps": "verl checkpoints every backend.save_freq steps",
    "train.rl.grad_cosine": "the gradient-cosine probe runs in the local trainer only",
    "filter.max_generation_rounds": "verl's filter_groups regenerates until the batch is full (docs/verl_efficiency.md)",
}


def rules(spec: Spec) -> None:
    """verl splits each step's prompts into equal PPO mini-batches of whole groups; on SLURM its Ray
    cluster is the job's allocation, so launcher.* and backend.* must describe the same nodes and GPUs."""
    rl, backend, launcher = spec.train.rl, spec.backend, spec.launcher
    for group in ("filter", "downsample"):
        option = getattr(spec, group)
        if settings_target(option) is None:
            raise RuleViolation(f"{group}.name", f"{option.name!r} names no verl settings (backend_settings on its config model), so backend=verl cannot run it")
    if rl.prompts_per_step % rl.mini_batch_prompts:
        raise RuleViolation(
            "train.rl.mini_batch_prompts", f"{rl.mini_batch_prompts} does not divide train.rl.prompts_per_step={rl.prompts_per_step} (verl needs equal mini-batches)"
        )
    kept = rl.n
    if spec.downsample.name != "none":
        # verl counts a PPO mini-batch as ppo_mini_batch_size x n rows; with m of n kept it must still hold whole groups.
        kept = spec.downsample.m  # type: ignore[union-attr]  (resolved against n when the spec was validated)
        if (rl.mini_batch_prompts * kept) % rl.n:
            raise RuleViolation(
                "downsample.m",
                f"backend=verl keeps m={kept} of train.rl.n={rl.n} rollouts and counts a PPO mini-batch in multiples of n rows: "
                f"train.rl.mini_batch_prompts x m = {rl.mini_batch_prompts * kept} must be a multiple of {rl.n}",
            )
    _micro_batches_divide(spec, kept)
    if launcher.name != "slurm":
        return
    if launcher.nodes != backend.nnodes:
        raise RuleViolation("launcher.nodes", f"{launcher.nodes} nodes, but backend.nnodes={backend.nnodes}: verl's Ray cluster spans the job's nodes; set both alike")
    if backend.device == "cuda" and launcher.gpus_per_node != backend.n_gpus_per_node:
        raise RuleViolation(
            "launcher.gpus_per_node", f"{launcher.gpus_per_node} GPUs per node, but backend.n_gpus_per_node={backend.n_gpus_per_node}: verl's workers use the job's GPUs; set both alike"
        )


def _micro_batches_divide(spec: Spec, kept: int) -> None:
    """verl 0.9.1 splits each rank's rows into micro-batches of exactly the configured size and asserts at
    its first log-prob or update that they divide (engine/utils.py, "data size must be divisible by ...")."""
    rl, backend = spec.train.rl, spec.backend
    ranks = backend.nnodes * backend.n_gpus_per_node
    over = f"verl's {ranks} rank{'s' if ranks > 1 else ''}"
    for what, prompts_path, prompts, micro_path, micro in (
        ("a step", "train.rl.prompts_per_step", rl.prompts_per_step,
         "backend.log_prob_micro_batch_size_per_gpu", backend.log_prob_micro_batch_size_per_gpu),
        ("a PPO mini-batch", "train.rl.mini_batch_prompts", rl.mini_batch_prompts,
         "backend.ppo_micro_batch_size_per_gpu", backend.ppo_micro_batch_size_per_gpu),
    ):
        rows = prompts * kept
        if rows % ranks:
            raise RuleViolation(prompts_path, f"the {rows} rollouts of {what} do not split evenly over {over} (backend.nnodes x backend.n_gpus_per_node)")
        if (rows // ranks) % micro:
            raise RuleViolation(
                micro_path, f"{micro} does not divide the {rows // ranks} rollouts of {what} on each of {over}; verl 0.9.1 needs whole micro-batches"
            )


BACKEND = register_backend(Backend(
    name="verl",
    stages={"sft": "slca.backends.verl.stages:sft_stage", "rl": "slca.backends.verl.stages:rl_stage"},
    # train.sft goes to the embedded SFT trainer (backend.device=cpu); train.rl and filter to verl's config.
    honours=(*SHARED_SECTIONS, *trained(("train.sft", "train.rl", "filter"), REFUSES)),
    refuses=REFUSES,
    rules=rules,
    dry_run="slca.backends.verl.stages:dry_run",
))
