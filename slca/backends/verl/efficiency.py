"""The verl settings of the spec's efficiency methods (docs/verl_efficiency.md): which verl keys the
`filter` and `downsample` options set. Pure composition, no verl import: `compose.py` merges these
into the run's verl config.

- `filter=pre_rollout`: slca's trainer gates prompts as verl's dataloader yields them, so the
  dataloader hands out one prompt at a time (`data.gen_batch_size=1`) and a skipped prompt leaves
  no half-used chunk behind; the state rides in verl's checkpoints (`prefilter.py`).
- `filter=dynamic_sampling`: verl's own `algorithm.filter_groups` on the canonical reward (the
  score), which is slca's rule; see the docs page for where the two differ.
- `downsample=max_variance|random`: slca's `ReplayBuffer` subclass (`sampler.py`) named through
  `trainer.v1.sampler.custom_sampler`, and verl's PPO mini-batch (counted in prompts x n rows)
  rescaled so one mini-batch still holds `train.rl.mini_batch_prompts` groups of m kept rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from slca.config.spec import Spec
from slca.registry import Registry

SAMPLER_MODULE = "pkg://slca.backends.verl.sampler"
SAMPLER_NAME = "SlcaReplayBuffer"
# verl's DAPO metric that reads the canonical pre-KL reward (`rm_scores`), i.e. slca's score.
CANONICAL_REWARD = "reward"

Settings = Callable[[Spec], dict[str, Any]]
VERL_FILTERS: Registry[Settings] = Registry("verl filter")
VERL_DOWNSAMPLERS: Registry[Settings] = Registry("verl down-sampler")


@VERL_FILTERS.register("none")
def _no_filter(spec: Spec) -> dict[str, Any]:
    return {}


@VERL_FILTERS.register("pre_rollout")
def _pre_rollout(spec: Spec) -> dict[str, Any]:
    return {"data.gen_batch_size": 1}


@VERL_FILTERS.register("dynamic_sampling")
def _dynamic_sampling(spec: Spec) -> dict[str, Any]:
    settings: dict[str, Any] = {"algorithm.filter_groups.enable": True, "algorithm.filter_groups.metric": CANONICAL_REWARD}
    if uses_slca_sampler(spec):
        # verl hands its DAPO settings only to its built-in buffer; slca's buffer takes them here.
        settings["+trainer.v1.sampler.sampler_kwargs.filter_groups_metric"] = CANONICAL_REWARD
    return settings


@VERL_DOWNSAMPLERS.register("none")
def _keep_all(spec: Spec) -> dict[str, Any]:
    return {}


def _keep_m(spec: Spec) -> dict[str, Any]:
    return {"actor_rollout_ref.actor.ppo_mini_batch_size": rescaled_mini_batch(spec)}


VERL_DOWNSAMPLERS.register("max_variance")(_keep_m)
VERL_DOWNSAMPLERS.register("random")(_keep_m)


def uses_slca_sampler(spec: Spec) -> bool:
    """slca's replay buffer is needed to keep m of n rollouts and to see every rollout's reward
    for the pre-rollout filter; otherwise verl's own buffer runs."""
    return spec.downsample.name != "none" or spec.filter.name == "pre_rollout"


def rescaled_mini_batch(spec: Spec) -> int:
    """verl's `ppo_mini_batch_size` when m of n rollouts are kept: verl counts a mini-batch as
    `ppo_mini_batch_size x n` rows, and one mini-batch must hold `mini_batch_prompts x m` kept
    rows, so the value is `mini_batch_prompts x m / n` (whole: verl's spec rules refuse anything
    else at composition, naming the path; m was resolved against n there too)."""
    rl = spec.train.rl
    return rl.mini_batch_prompts * spec.downsample.m // rl.n  # type: ignore[union-attr]


def efficiency_settings(spec: Spec, spec_path: Path) -> dict[str, Any]:
    """The verl config keys (Hydra override keys) that carry out the spec's filter and down-sampler."""
    settings = {**VERL_FILTERS.get(spec.filter.name)(spec), **VERL_DOWNSAMPLERS.get(spec.downsample.name)(spec)}
    if uses_slca_sampler(spec):
        settings.update(
            {
                "trainer.v1.sampler.custom_sampler.path": SAMPLER_MODULE,
                "trainer.v1.sampler.custom_sampler.name": SAMPLER_NAME,
                "+trainer.v1.sampler.sampler_kwargs.spec_path": str(spec_path),
            }
        )
    return settings
