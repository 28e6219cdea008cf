"""SLCA-GRPO: segment-locked credit assignment (docs/method.md#segments-from-mask-topology, #presence-filtered-group-normaliser and #slca-grpo).

Two per-rollout scalars (process = tool turns, summary = final turn) are each normalised inside
the rollout group over the members where that segment exists, weighted after normalisation and
routed to the tokens of their own segment only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from slca.algos import kernels
from slca.algos.groups import group_ids, group_normalise
from slca.algos.registry import register_estimator, resolve_config, reward_batch
from slca.algos.segment_bounds import SegmentBounds, route, segment_bounds
from slca.config.groups.estimator import SlcaGrpoEstimator
from slca.rewards.record import RewardBatch


@dataclass(frozen=True)
class SlcaOutput:
    """advantages, returns: float32 [B, T] (returns is advantages); the rest per rollout [B]:
    adv_process / adv_summary (after weights), presence flags, and which rows the guard fired on."""

    advantages: torch.Tensor
    returns: torch.Tensor
    adv_process: torch.Tensor
    adv_summary: torch.Tensor
    process_present: torch.Tensor
    summary_present: torch.Tensor
    penalty: torch.Tensor

    def extras(self) -> dict[str, torch.Tensor]:
        """The per-rollout fields, for logging (`critic/advantages/{process,summary}_*`);
        `adv_tool` is the same tensor as `adv_process` (the issue's name for it)."""
        return {
            "adv_process": self.adv_process,
            "adv_tool": self.adv_process,
            "adv_summary": self.adv_summary,
            "process_present": self.process_present,
            "summary_present": self.summary_present,
            "penalty": self.penalty,
        }


def _kl_fold(
    token_level_rewards: torch.Tensor, token_level_scores: torch.Tensor | None, bounds: SegmentBounds
) -> tuple[torch.Tensor, torch.Tensor] | None:
    """Per-segment sums of k_t = reward_t - score_t, float64 [B] each (docs/method.md#slca-grpo step 4); None when
    k is identically 0 (the reference config, use_kl_in_reward=false)."""
    if token_level_scores is None or token_level_scores is token_level_rewards:
        return None
    k = kernels.difference(token_level_rewards, token_level_scores)
    if kernels.count_nonzero(k) == 0:
        return None
    kernels.mul_(k, bounds.learnable)
    total = k.sum(dim=1).to(torch.float64)
    process = kernels.mul_(k, bounds.process_region()).sum(dim=1).to(torch.float64)
    return process, total - process


def compute_slca_grpo(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: Any,
    *,
    segment_rewards: RewardBatch | Mapping[str, Any] | None,
    config: SlcaGrpoEstimator | Mapping[str, Any] | None = None,
    token_level_scores: torch.Tensor | None = None,
    last_run_is_tool_call: torch.Tensor | None = None,
) -> SlcaOutput:
    """SLCA-GRPO advantages with per-rollout diagnostics (docs/method.md#slca-grpo steps 1-8).

    token_level_rewards, token_level_scores: [B, T] (their difference is the KL folded into each
    segment's score; None or identical tensors -> no fold); response_mask: [B, T]; index: [B]
    group ids; segment_rewards (a RewardBatch, or its wire columns): `process` and `summary`
    required, `score` and `no_call` optional (0), `last_turn_is_tool_call` needed for
    config.final_tool_turn="process" (or pass `last_run_is_tool_call`).
    """
    cfg = resolve_config(config, SlcaGrpoEstimator)
    batch = response_mask.shape[0]
    device = response_mask.device
    rb = reward_batch(segment_rewards, batch, device=device)
    if last_run_is_tool_call is None:
        last_run_is_tool_call = rb.last_turn_is_tool_call
    bounds = segment_bounds(response_mask, last_run_is_tool_call=last_run_is_tool_call, final_tool_turn=cfg.final_tool_turn)

    r_p = rb.need("process", "slca_grpo")
    r_s = rb.need("summary", "slca_grpo")
    total = rb.value("score", 0.0)
    # Omission guard (docs/method.md#slca-grpo step 3): the no-call penalty replaces the summary reward; the tool reward is 0.
    penalty = rb.value("no_call", False)
    if cfg.penalty_guard == "reference":
        penalty = penalty | (total < 0)
    r_p = torch.where(penalty, torch.zeros_like(r_p), r_p).to(torch.float64)
    r_s = torch.where(penalty, total, r_s).to(torch.float64)

    fold = _kl_fold(token_level_rewards, token_level_scores, bounds)
    if fold is not None:
        r_p = r_p + fold[0]
        r_s = r_s + fold[1]

    gid, n_groups = group_ids(index, device=device)
    norm = {"norm_by_std": cfg.norm_by_std, "eps": cfg.eps}
    # Weights after normalisation: before it they would cancel in the z-score (docs/method.md#slca-grpo step 6).
    adv_p = group_normalise(r_p, gid, n_groups, bounds.process_present, **norm) * cfg.w_process
    adv_s = group_normalise(r_s, gid, n_groups, bounds.summary_present, **norm) * cfg.w_summary
    advantages = route(bounds, response_mask, adv_p, adv_s)
    return SlcaOutput(advantages, advantages, adv_p, adv_s, bounds.process_present, bounds.summary_present, penalty)


@register_estimator("slca_grpo")
def slca_grpo(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: Any,
    *,
    segment_rewards: RewardBatch | Mapping[str, Any] | None = None,
    config: SlcaGrpoEstimator | Mapping[str, Any] | None = None,
    token_level_scores: torch.Tensor | None = None,
    extras: dict | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Registry form of `compute_slca_grpo`: returns (advantages, returns), fills `extras`
    with adv_process, adv_summary, presence flags and penalty ([B] each)."""
    out = compute_slca_grpo(
        token_level_rewards,
        response_mask,
        index,
        segment_rewards=segment_rewards,
        config=config,
        token_level_scores=token_level_scores,
    )
    if extras is not None:
        extras.update(out.extras())
    return out.advantages, out.returns
