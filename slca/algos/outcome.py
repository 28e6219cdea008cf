"""Outcome-reward baselines: one scalar per rollout, broadcast to all its response tokens.

grpo: group z-score (DeepSeekMath, Shao et al. 2024; docs/method.md#baseline-estimators "stock GRPO"),
dr_grpo: mean-centred, no std (Dr. GRPO, Liu et al. 2025), rloo: leave-one-out baseline
(Ahmadian et al. 2024). The scalar is sum_t token_level_rewards; shapes as in `registry`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from slca.algos import kernels
from slca.algos.groups import group_ids, group_normalise, leave_one_out
from slca.algos.registry import register_estimator, resolve_config
from slca.config.groups.estimator import DrGrpoEstimator, GrpoEstimator, RlooEstimator


def _broadcast(adv: torch.Tensor, response_mask: torch.Tensor, extras: dict | None) -> tuple[torch.Tensor, torch.Tensor]:
    if extras is not None:
        extras["advantage"] = adv
    # returns is the same tensor, as in verl's GRPO (outcome estimators have no critic).
    out = kernels.scale_rows(adv, response_mask)
    return out, out


@register_estimator("grpo")
def grpo(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: Any,
    *,
    segment_rewards: Any = None,  # not read: the outcome is sum_t token_level_rewards
    config: GrpoEstimator | Mapping[str, Any] | None = None,
    token_level_scores: torch.Tensor | None = None,
    extras: dict | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Group z-score of sum_t token_level_rewards, times response_mask. [B, T] -> ([B, T], [B, T]).

    Singleton groups get 0 (config.singleton_fallback="reference": verl's mean 0 / std 1).
    """
    cfg = resolve_config(config, GrpoEstimator)
    gid, n_groups = group_ids(index, device=token_level_rewards.device)
    scores = token_level_rewards.sum(dim=-1)
    adv = group_normalise(scores, gid, n_groups, norm_by_std=cfg.norm_by_std, eps=cfg.eps, singleton=cfg.singleton_fallback)
    return _broadcast(adv, response_mask, extras)


@register_estimator("dr_grpo")
def dr_grpo(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: Any,
    *,
    segment_rewards: Any = None,  # not read: the outcome is sum_t token_level_rewards
    config: DrGrpoEstimator | Mapping[str, Any] | None = None,
    token_level_scores: torch.Tensor | None = None,
    extras: dict | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """sum_t reward minus its group mean (no std division), times response_mask; singletons 0."""
    resolve_config(config, DrGrpoEstimator)
    gid, n_groups = group_ids(index, device=token_level_rewards.device)
    adv = group_normalise(token_level_rewards.sum(dim=-1), gid, n_groups, norm_by_std=False)
    return _broadcast(adv, response_mask, extras)


@register_estimator("rloo")
def rloo(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: Any,
    *,
    segment_rewards: Any = None,  # not read: the outcome is sum_t token_level_rewards
    config: RlooEstimator | Mapping[str, Any] | None = None,
    token_level_scores: torch.Tensor | None = None,
    extras: dict | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """sum_t reward minus the mean of the other group members, times response_mask; singletons 0."""
    resolve_config(config, RlooEstimator)
    gid, n_groups = group_ids(index, device=token_level_rewards.device)
    adv = leave_one_out(token_level_rewards.sum(dim=-1), gid, n_groups)
    return _broadcast(adv, response_mask, extras)
