"""Advantage-estimator registry: name -> pure function over tensors.

Every estimator has the signature

    fn(token_level_rewards, response_mask, index, *, segment_rewards=None, config=None,
       token_level_scores=None, extras=None) -> (advantages, returns)

token_level_rewards / token_level_scores: [B, T] float (the scalar reward sits on the last valid
token; rewards = scores - beta*KL when KL is folded into the reward); response_mask: [B, T];
index: [B] group ids (hashables or a 1-D tensor); segment_rewards: dict of [B] per-rollout values
keyed like the reward entry's output (`process_score`, `summary_score`, `score`,
`should_call_but_no_call`, `toolpo_correct_ratio`); config: the estimator's pydantic model from
`slca.config.groups.estimator` (defaults when None); extras: optional dict the estimator fills
with per-rollout diagnostics ([B] tensors) for logging. advantages, returns: float32 [B, T].
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from slca.registry import Registry

Estimator = Callable[..., Any]
ESTIMATORS: Registry[Estimator] = Registry("estimator")

# Modules whose import registers the built-in estimators (imported on first lookup).
_BUILTIN_MODULES = ("slca.algos.outcome", "slca.algos.slca_grpo", "slca.algos.toolpo")

# Accepted aliases for segment-reward keys (the reference also reads these names, docs/method.md#slca-grpo).
_ALIASES = {
    "score": ("score", "total_score", "score_total"),
    "should_call_but_no_call": ("should_call_but_no_call", "should_no_call"),
}

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


def segment_reward(
    segment_rewards: Mapping[str, Any] | None,
    key: str,
    batch: int,
    *,
    device: Any = None,
    default: float | None = None,
) -> Any:
    """Per-rollout values for `key` (or an accepted alias) as float32 [B]; None entries read as 0.

    Raises KeyError when the key is missing and no default is given.
    """
    import numpy as np
    import torch

    found = None
    for name in _ALIASES.get(key, (key,)):
        if segment_rewards is not None and name in segment_rewards:
            found = segment_rewards[name]
            break
    if found is None:
        if default is None:
            have = sorted(segment_rewards) if segment_rewards else []
            raise KeyError(f"segment_rewards needs {key!r} (have {have})")
        return torch.full((batch,), float(default), dtype=torch.float32, device=device)
    if isinstance(found, torch.Tensor):
        values = found.detach().to(device=device, dtype=torch.float32).reshape(-1)
    else:
        arr = np.asarray(found)
        if arr.dtype.kind in "biuf":
            values = torch.from_numpy(arr.astype(np.float32).reshape(-1)).to(device)
        else:  # object column (verl non-tensor batch): None means "not scored" and reads as 0
            items = arr.reshape(-1).tolist()
            values = torch.tensor([0.0 if v is None else float(v) for v in items], dtype=torch.float32, device=device)
    if values.numel() != batch:
        raise ValueError(f"segment_rewards[{key!r}] has {values.numel()} values for a batch of {batch}")
    return values
