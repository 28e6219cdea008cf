"""The root of a resolved experiment spec: one typed node per config group."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from slca.config.base import RuleViolation, SlcaModel, plain_name
from slca.config.groups.backbone import BackboneConfig
from slca.config.groups.backend import BackendConfig
from slca.config.groups.data import DataConfig
from slca.config.groups.downsample import DownsampleConfig, kept_per_prompt
from slca.config.groups.estimator import EstimatorConfig
from slca.config.groups.eval import EvalConfig
from slca.config.groups.filter import FilterConfig
from slca.config.groups.launcher import LauncherConfig
from slca.config.groups.logger import LoggerConfig
from slca.config.groups.reward import RewardConfig
from slca.config.groups.run import RunConfig
from slca.config.groups.simulator import SimulatorConfig
from slca.config.groups.train import TrainConfig

# Config groups that have a folder of options under conf/; the experiment group is an overlay.
GROUPS: tuple[str, ...] = (
    "data", "backbone", "estimator", "reward", "filter", "downsample",
    "simulator", "backend", "launcher", "logger", "eval",
)


class Spec(SlcaModel):
    """A fully resolved experiment: what `spec.yaml` in every run directory holds."""

    experiment: str = Field("embedded_demo", description="Name of the experiment overlay this spec was composed from (a plain name: it names runs/<experiment>/).")
    description: str = Field("", description="One-line purpose of the experiment.")
    run: RunConfig = Field(default_factory=RunConfig, description="Run identity, seed, stages and directory.")
    data: DataConfig = Field(..., description="Data splits.")
    backbone: BackboneConfig = Field(..., description="Policy model.")
    estimator: EstimatorConfig = Field(..., description="Advantage estimator.")
    reward: RewardConfig = Field(..., description="Reward function.")
    filter: FilterConfig = Field(..., description="Prompt filter.")
    downsample: DownsampleConfig = Field(..., description="Rollout down-sampling.")
    simulator: SimulatorConfig = Field(..., description="Tool simulator for rollouts.")
    backend: BackendConfig = Field(..., description="Training engine.")
    launcher: LauncherConfig = Field(..., description="Where the run executes.")
    logger: LoggerConfig = Field(..., description="Experiment tracking.")
    eval: EvalConfig = Field(..., description="Evaluation protocol.")
    train: TrainConfig = Field(default_factory=TrainConfig, description="SFT and RL hyperparameters.")

    @field_validator("experiment")
    @classmethod
    def _plain(cls, value: str) -> str:
        return plain_name(value, "experiment name")  # type: ignore[return-value]

    @model_validator(mode="after")
    def _cross_group_rules(self) -> Spec:
        """Rules that span groups, so `slca config validate` refuses a spec that would die mid-run."""
        rl = self.train.rl
        if self.downsample.name != "none":
            m = kept_per_prompt(self.downsample, rl.n)
            if m > rl.n:
                where = "downsample.m" if self.downsample.m is not None else "train.rl.n"
                raise RuleViolation(where, f"down-sampling keeps m={m} of train.rl.n={rl.n} rollouts per prompt; m must not exceed n")
        if self.backend.name == "verl" and rl.prompts_per_step % rl.mini_batch_prompts:
            # verl splits each step's prompts into equal PPO mini-batches.
            raise RuleViolation(
                "train.rl.mini_batch_prompts", f"{rl.mini_batch_prompts} does not divide train.rl.prompts_per_step={rl.prompts_per_step} (verl needs equal mini-batches)"
            )
        if self.backend.name == "verl" and self.downsample.name != "none":
            # verl counts a PPO mini-batch as ppo_mini_batch_size x n rows; with m of n kept it must still hold whole groups.
            m = kept_per_prompt(self.downsample, rl.n)
            if (rl.mini_batch_prompts * m) % rl.n:
                raise RuleViolation(
                    "downsample.m" if self.downsample.m is not None else "train.rl.mini_batch_prompts",
                    f"backend=verl keeps m={m} of train.rl.n={rl.n} rollouts and counts a PPO mini-batch in multiples of n rows: "
                    f"train.rl.mini_batch_prompts x m = {rl.mini_batch_prompts * m} must be a multiple of {rl.n}",
                )
        if self.backend.name == "verl" and self.launcher.name == "slurm":
            _verl_on_slurm_rules(self)
        if self.backend.name == "llamafactory":
            _llamafactory_rules(self)
        if self.backend.name == "local":
            # The embedded trainer feeds prompt + response through the backbone in one sequence.
            total = rl.max_prompt_length + rl.max_response_length
            if total > self.backbone.max_position_embeddings:
                raise RuleViolation(
                    "train.rl.max_response_length",
                    f"max_prompt_length + max_response_length = {total} exceeds backbone.max_position_embeddings={self.backbone.max_position_embeddings}",
                )
        return self


def _verl_on_slurm_rules(spec: Spec) -> None:
    """verl's Ray cluster is the SLURM job's allocation (launcher.*), and verl's trainer plans its
    workers from backend.*: the two must describe the same nodes (and, on GPUs, the same GPUs)."""
    launcher, backend = spec.launcher, spec.backend
    if launcher.nodes != backend.nnodes:
        raise RuleViolation("launcher.nodes", f"{launcher.nodes} nodes, but backend.nnodes={backend.nnodes}: verl's Ray cluster spans the job's nodes; set both alike")
    if backend.device == "cuda" and launcher.gpus_per_node != backend.n_gpus_per_node:
        raise RuleViolation(
            "launcher.gpus_per_node", f"{launcher.gpus_per_node} GPUs per node, but backend.n_gpus_per_node={backend.n_gpus_per_node}: verl's workers use the job's GPUs; set both alike"
        )


def _llamafactory_rules(spec: Spec) -> None:
    """LLaMA-Factory steps see micro_batch_size x GPUs x accumulation conversations, so the batch must
    divide evenly; the tiny backbone is rolled out with the `qwen` layout, so it trains with that."""
    sft, backend = spec.train.sft, spec.backend
    per_pass = sft.micro_batch_size * backend.nproc_per_node
    if sft.batch_size % per_pass:
        raise RuleViolation(
            "train.sft.batch_size",
            f"{sft.batch_size} is not a multiple of train.sft.micro_batch_size x backend.nproc_per_node = {per_pass} (LLaMA-Factory accumulates whole micro-batches)",
        )
    if spec.backbone.kind == "tiny" and backend.template not in (None, "qwen"):
        raise RuleViolation("backend.template", f"{backend.template!r}: the tiny backbone trains with LLaMA-Factory's `qwen` template (the layout its rollouts render); use null")
