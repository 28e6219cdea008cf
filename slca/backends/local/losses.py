"""Policy-gradient losses for the embedded trainer: pure functions over (B, T) tensors.

Token log-probs and entropies come from the policy's logits; the PPO clipped objective follows
Schulman et al. 2017 with decoupled low/high clip (clip-higher, DAPO, Yu et al. 2025) and the
dual clip of Ye et al. 2020 for negative advantages, as verl computes it (docs/method.md#training-loop). KL estimators
follow Schulman's "Approximating KL divergence" note (k1, k3 = low_var_kl) and a squared-error k2.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

LOG_RATIO_CLAMP = 20.0
LOW_VAR_KL_CLAMP = 10.0


def token_logprobs_and_entropy(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-prob of each target token and the entropy of each predictive distribution.

    logits: (B, T, V) predicting `targets` (B, T). Returns two (B, T) float32 tensors.
    """
    logp_all = F.log_softmax(logits.float(), dim=-1)
    logp = logp_all.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    return logp, entropy


def aggregate(values: torch.Tensor, mask: torch.Tensor, mode: str, *, norm_length: int | None = None) -> torch.Tensor:
    """Reduce a (B, T) per-token loss to a scalar over the tokens where `mask` is 1.

    token-mean: mean over all masked tokens of the batch (verl's default).
    seq-mean-token-sum-norm: per-sequence token sum divided by a constant length (Dr. GRPO's
        length-unbiased aggregation; `norm_length` defaults to T), then the mean over sequences.
    seq-mean-token-mean: per-sequence token mean, then the mean over sequences with any token.
    """
    mask = mask.to(values.dtype)
    if mode == "token-mean":
        return (values * mask).sum() / mask.sum().clamp_min(1.0)
    if mode == "seq-mean-token-sum-norm":
        length = float(norm_length or values.shape[-1])
        return ((values * mask).sum(-1) / length).mean()
    if mode == "seq-mean-token-mean":
        counts = mask.sum(-1)
        per_seq = (values * mask).sum(-1) / counts.clamp_min(1.0)
        has_tokens = (counts > 0).to(values.dtype)
        return (per_seq * has_tokens).sum() / has_tokens.sum().clamp_min(1.0)
    raise ValueError(f"unknown loss_agg_mode {mode!r}")


@dataclass(frozen=True)
class PolicyLossStats:
    """Diagnostics of one policy-loss evaluation (floats, over masked tokens)."""

    clip_fraction: float
    clip_fraction_low: float
    clip_fraction_high: float
    dual_clip_fraction: float
    approx_kl: float


def ppo_policy_loss(
    log_prob: torch.Tensor,
    old_log_prob: torch.Tensor,
    advantages: torch.Tensor,
    response_mask: torch.Tensor,
    *,
    clip_low: float,
    clip_high: float,
    dual_clip: float | None,
    agg_mode: str,
    norm_length: int | None = None,
) -> tuple[torch.Tensor, PolicyLossStats]:
    """Clipped surrogate loss (to minimise). All inputs (B, T); returns a scalar and stats.

    ratio = exp(clamp(log_prob - old_log_prob, +-20)); per token
    L = max(-A * ratio, -A * clip(ratio, 1 - clip_low, 1 + clip_high)), and for A < 0 with a dual
    clip c: L = min(L, -A * c).
    """
    log_ratio = (log_prob - old_log_prob).clamp(-LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)
    ratio = log_ratio.exp()
    unclipped = -advantages * ratio
    clipped = -advantages * ratio.clamp(1.0 - clip_low, 1.0 + clip_high)
    loss = torch.maximum(unclipped, clipped)
    dual_mask = torch.zeros_like(loss, dtype=torch.bool)
    if dual_clip is not None:
        bounded = torch.minimum(loss, -advantages * dual_clip)
        dual_mask = (advantages < 0) & (bounded < loss)
        loss = torch.where(advantages < 0, bounded, loss)
    value = aggregate(loss, response_mask, agg_mode, norm_length=norm_length)
    with torch.no_grad():
        m = response_mask.bool()
        count = max(int(m.sum()), 1)
        was_clipped = clipped > unclipped
        stats = PolicyLossStats(
            clip_fraction=float((was_clipped & m).sum()) / count,
            clip_fraction_low=float((was_clipped & m & (ratio < 1.0 - clip_low)).sum()) / count,
            clip_fraction_high=float((was_clipped & m & (ratio > 1.0 + clip_high)).sum()) / count,
            dual_clip_fraction=float((dual_mask & m).sum()) / count,
            approx_kl=float(((-log_ratio) * m).sum()) / count,
        )
    return value, stats


def kl_penalty(log_prob: torch.Tensor, ref_log_prob: torch.Tensor, kind: str) -> torch.Tensor:
    """Per-token KL estimate between the policy and the reference, (B, T) -> (B, T).

    kl: k1 = log p - log q; mse: k2 = (log p - log q)^2 / 2; low_var_kl: k3 = q/p - log(q/p) - 1,
    clamped to +-10 as verl does.
    """
    diff = log_prob - ref_log_prob
    if kind == "kl":
        return diff
    if kind == "mse":
        return 0.5 * diff.square()
    if kind == "low_var_kl":
        log_ratio = -diff
        return (log_ratio.exp() - log_ratio - 1.0).clamp(-LOW_VAR_KL_CLAMP, LOW_VAR_KL_CLAMP)
    raise ValueError(f"unknown kl_type {kind!r}")
