"""Advantage-estimator registry: name -> pure function over tensors.

Every estimator has the signature

    fn(token_level_rewards, response_mask, index, *, segment_rewards=None, config=None,
       token_level_scores=None, extras=None) -> (advantages, returns)

token_level_rewards / token_level_scores: [B, T] float (the scalar reward sits on the last valid
token; rewards = scores - beta*KL when KL is folded into the reward); response_mask: [B, T];
index: [B] group ids (hashables or a 1-D tensor); segment_rewards: the per-rollout rewards, a
`slca.rewards.RewardBatch` (or a mapping of [B] columns under the reward rows' wire names,
converted by `reward_batch`); config: the estimator's pydantic model from
`slca.config.groups.estimator` (defaults when None); extras: optional dict the estimator fills
with per-rollout diagnostics ([B] tensors) for logging. advantages, returns: float32 [B, T].
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from slca.registry import Registry
from slca.rewards.record import RewardBatch

Estimator = Callable[..., Any]
ESTIMATORS: Registry[Estimator] = Registry("estimator")

# Modules whose import registers the built-in estimators (imported on first lookup).
_BUILTIN_MODULES = ("slca.algos.outcome", "slca.algos.slca_grpo", "slca.algos.toolpo")

M = TypeVar("M")


def register_estimator(name: str) -> Callable[[Estimator], Estimator]:
    """Decorator registering an estimator under `name`; a second registration of the name raises."""
    return ESTIMATORS.register(name)


def _load_builtins() -> None:
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


def get_estimator(name: str) -> Estimator:
    """The estimator function registered under `name` (KeyError listing the known names)."""
    _load_builtins()
    return ESTIMATORS.get(name)


def list_estimators() -> list[str]:
    """Names of every registered estimator, sorted."""
    _load_builtins()
    return ESTIMATORS.names()


def resolve_config(config: Any, cls: type[M]) -> M:
    """`config` as an instance of the pydantic model `cls`: None -> defaults, a mapping -> validated."""
    if config is None:
        return cls()
    if isinstance(config, cls):
        return config
    if isinstance(config, Mapping):
        return cls(**config)
    raise TypeError(f"config for {cls.__name__} must be {cls.__name__}, a mapping or None, got {type(config).__name__}")


def reward_batch(segment_rewards: Any, batch: int, *, device: Any = None) -> RewardBatch:
    """The per-rollout rewards as a typed `RewardBatch` on `device`: a RewardBatch is used as
    is, a mapping of [B] columns under their wire names (verl's non-tensor batch) is converted
    by `RewardBatch.from_columns`, None gives an empty batch. A column of another length than
    `batch` is a ValueError."""
    rb = RewardBatch.from_columns(segment_rewards, batch, device=device)
    n = len(rb)
    if n not in (0, batch):
        raise ValueError(f"segment rewards hold {n} rollouts for a batch of {batch}")
    return rb.to(device) if device is not None else rb
