"""The root of a resolved experiment spec: one typed node per config group."""

from __future__ import annotations

from pydantic import Field

from slca.config.base import SlcaModel
from slca.config.groups.backbone import BackboneConfig
from slca.config.groups.backend import BackendConfig
from slca.config.groups.data import DataConfig
from slca.config.groups.downsample import DownsampleConfig
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

    experiment: str = Field("embedded_demo", description="Name of the experiment overlay this spec was composed from.")
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
