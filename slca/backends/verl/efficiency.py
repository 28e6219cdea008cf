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

import pkgutil
from pathlib import Path
from typing import Any

from slca.config.spec import Spec

SAMPLER_MODULE = "pkg://slca.backends.verl.sampler"
SAMPLER_NAME = "SlcaReplayBuffer"
# verl's DAPO metric that reads the canonical pre-KL reward (`rm_scores`), i.e. slca's score.
CANONICAL_REWARD = "reward"
BACKEND = "verl"

# Each function below is named by its option's config model (`backend_settings["verl"]`, in
# slca/config/groups/{filter,downsample}.py): the option's one entry says what verl sets for it.


def no_settings(spec: Spec) -> dict[str, Any]:
    """Nothing: verl's own loop already does what the option asks (no filter, every rollout kept)."""
    return {}


def pre_rollout_settings(spec: Spec) -> dict[str, Any]:
    return {"data.gen_batch_size": 1}


def dynamic_sampling_settings(spec: Spec) -> dict[str, Any]:
    settings: dict[str, Any] = {"algorithm.filter_groups.enable": True, "algorithm.filter_groups.metric": CANONICAL_REWARD}
    if uses_slca_sampler(spec):
        # verl hands its DAPO settings only to its built-in buffer; slca's buffer takes them here.
        settings["+trainer.v1.sampler.sampler_kwargs.filter_groups_metric"] = CANONICAL_REWARD
    return settings


def keep_m_settings(spec: Spec) -> dict[str, Any]:
    return {"actor_rollout_ref.actor.ppo_mini_batch_size": rescaled_mini_batch(spec)}


SETTINGS_NEEDING_SLCA_SAMPLER = frozenset({f"{__name__}:pre_rollout_settings", f"{__name__}:keep_m_settings"})


def settings_target(option: Any) -> str | None:
    """The "module:function" giving verl's settings for a filter or down-sampler option; None when
    its model names none (verl's spec rules refuse it at composition)."""
    return getattr(type(option), "backend_settings", {}).get(BACKEND)


def option_settings(spec: Spec, option: Any) -> dict[str, Any]:
    target = settings_target(option)
    if target is None:
        raise ValueError(f"option {option.name!r} names no verl settings (its config model's backend_settings)")
    return pkgutil.resolve_name(target)(spec)  # type: ignore[no-any-return]


def uses_slca_sampler(spec: Spec) -> bool:
    """slca's replay buffer is needed to keep m of n rollouts and to see every rollout's reward
    for the pre-rollout filter: by the options whose verl settings are those below (whatever their
    names); otherwise verl's own buffer runs."""
    return any(settings_target(option) in SETTINGS_NEEDING_SLCA_SAMPLER for option in (spec.filter, spec.downsample))


def rescaled_mini_batch(spec: Spec) -> int:
    """verl's `ppo_mini_batch_size` when m of n rollouts are kept: verl counts a mini-batch as
    `ppo_mini_batch_size x n` rows, and one mini-batch must hold `mini_batch_prompts x m` kept
    rows, so the value is `mini_batch_prompts x m / n` (whole: verl's spec rules refuse anything
    else at composition, naming the path; m was resolved against n there too)."""
    rl = spec.train.rl
    return rl.mini_batch_prompts * spec.downsample.m // rl.n  # type: ignore[union-attr]


def efficiency_settings(spec: Spec, spec_path: Path) -> dict[str, Any]:
    """The verl config keys (Hydra override keys) that carry out the spec's filter and down-sampler."""
    settings = {**option_settings(spec, spec.filter), **option_settings(spec, spec.downsample)}
    if uses_slca_sampler(spec):
        settings.update(
            {
                "trainer.v1.sampler.custom_sampler.path": SAMPLER_MODULE,
                "trainer.v1.sampler.custom_sampler.name": SAMPLER_NAME,
                "+trainer.v1.sampler.sampler_kwargs.spec_path": str(spec_path),
            }
        )
    return settings
