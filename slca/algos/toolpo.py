"""ToolPO baseline (docs/method.md#baseline-estimators): global GRPO advantage on every learnable token plus
lambda x a presence-filtered tool-segment advantage on the process tokens."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from slca.algos.groups import group_ids, group_normalise
from slca.algos.registry import register_estimator, resolve_config, reward_batch
from slca.algos.segment_bounds import route, segment_bounds
from slca.config.groups.estimator import ToolPoEstimator
from slca.rewards.record import RewardBatch


@register_estimator("toolpo")
def toolpo(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: Any,
    *,
    segment_rewards: RewardBatch | Mapping[str, Any] | None = None,
    config: ToolPoEstimator | Mapping[str, Any] | None = None,
    token_level_scores: torch.Tensor | None = None,
    extras: dict | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """adv_t = (A_global + process_mask_t * lam * A_tool) * mask_t on learnable tokens, 0 elsewhere.

    A_global: group z-score of sum_t token_level_rewards [B, T]. A_tool: presence-filtered
    normalisation (docs/method.md#presence-filtered-group-normaliser) of the rewards'
    `toolpo_correct_ratio` (strict-correct calls / |gold|) over rows with a process segment; a
    reward that does not provide it is a KeyError (no silent fallback to another signal).
    Returns ([B, T], same tensor).
    """
    cfg = resolve_config(config, ToolPoEstimator)
    batch = response_mask.shape[0]
    device = response_mask.device
    tool_signal = reward_batch(segment_rewards, batch, device=device).need("toolpo_correct_ratio", "toolpo")
    gid, n_groups = group_ids(index, device=device)
    norm = {"norm_by_std": cfg.norm_by_std, "eps": cfg.eps}
    a_global = group_normalise(token_level_rewards.sum(dim=-1), gid, n_groups, singleton=cfg.singleton_fallback, **norm)
    bounds = segment_bounds(response_mask)
    a_tool = group_normalise(tool_signal, gid, n_groups, bounds.process_present, **norm) * cfg.lam
    advantages = route(bounds, response_mask, a_global + a_tool, a_global)
    if extras is not None:
        extras.update({"adv_global": a_global, "adv_tool": a_tool, "process_present": bounds.process_present})
    return advantages, advantages
