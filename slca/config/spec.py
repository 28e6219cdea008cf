"""The root of a resolved experiment spec: one typed node per config group."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator, model_validator

from slca.config.backend_registry import check_spec
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
from slca.config.groups.train import RlConfig, TrainConfig
from slca.config.limits import MAX_GROUP_SIZE

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

    @model_validator(mode="before")
    @classmethod
    def _resolve_kept_count(cls, data: Any) -> Any:
        """A null `downsample.m` is resolved here, once, against `train.rl.n` (max(2, n // 2), the
        paper's m = n/2): the saved spec holds the number every stage and backend reads. An invalid
        n is left for validation to name."""
        if not isinstance(data, dict):
            return data
        downsample = _as_dict(data.get("downsample"))
        if downsample is None or downsample.get("name") not in ("max_variance", "random") or downsample.get("m") is not None:
            return data
        rl = _as_dict((_as_dict(data.get("train")) or {}).get("rl")) or {}
        n = rl.get("n", RlConfig.model_fields["n"].default)
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_GROUP_SIZE:
            return data
        m = kept_per_prompt(n)
        if m > n:
            raise RuleViolation("train.rl.n", f"down-sampling keeps at least m={m} rollouts per prompt (downsample.m is null: max(2, n // 2)); n must be at least {m}")
        return {**data, "downsample": {**downsample, "m": m}}

    @model_validator(mode="after")
    def _cross_group_rules(self) -> Spec:
        """Rules that span groups, so `slca config validate` refuses a spec that would die mid-run."""
        rl = self.train.rl
        if self.downsample.name != "none" and self.downsample.m is not None and self.downsample.m > rl.n:
            raise RuleViolation("downsample.m", f"down-sampling keeps m={self.downsample.m} of train.rl.n={rl.n} rollouts per prompt; m must not exceed n")
        if self.eval.benchmark == "lm_eval" and "rl" in self.run.stages and rl.eval_every_steps > 0:
            # The harness scores a saved model directory; the policy evaluated during RL exists only in memory.
            raise RuleViolation("train.rl.eval_every_steps", "eval.benchmark=lm_eval scores saved models, not the policy during RL; "
                                "set 0 (the eval stage scores the trained policies)")
        # The chosen backend's refusals (fields it does not honour) and its own rules, asked through the
        # registry this layer owns: the config layer imports no backend.
        check_spec(self)
        return self



def _as_dict(node: Any) -> dict[str, Any] | None:
    """A config node given as a mapping or as an already built model, as a mapping."""
    if isinstance(node, BaseModel):
        return dict(node)
    return node if isinstance(node, dict) else None
