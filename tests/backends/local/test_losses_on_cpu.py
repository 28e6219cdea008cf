"""PPO loss, aggregation modes and KL estimators against hand-computed values."""

from __future__ import annotations

import math

import pytest
import torch

from slca.backends.local.losses import aggregate, kl_penalty, ppo_policy_loss, token_logprobs_and_entropy


def test_token_logprobs_and_entropy_match_definitions() -> None:
    logits = torch.tensor([[[0.0, 0.0], [math.log(3.0), 0.0]]])
    logp, entropy = token_logprobs_and_entropy(logits, torch.tensor([[0, 0]]))
    assert torch.allclose(logp, torch.log(torch.tensor([[0.5, 0.75]])))
    expected_h = torch.tensor([[math.log(2.0), -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))]])
    assert torch.allclose(entropy, expected_h)


def test_aggregation_modes() -> None:
    values = torch.tensor([[1.0, 2.0, 3.0, 0.0], [4.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0]])
    assert aggregate(values, mask, "token-mean").item() == pytest.approx((1 + 2 + 3 + 4) / 4)
    assert aggregate(values, mask, "seq-mean-token-mean").item() == pytest.approx((2.0 + 4.0) / 2)
    assert aggregate(values, mask, "seq-mean-token-sum-norm").item() == pytest.approx((6 / 4 + 4 / 4) / 2)
    assert aggregate(values, mask, "seq-mean-token-sum-norm", norm_length=2).item() == pytest.approx((3 + 2) / 2)
    with pytest.raises(ValueError, match="unknown loss_agg_mode"):
        aggregate(values, mask, "sum")


def test_ppo_loss_clips_each_side_and_dual_clip() -> None:
    # ratios e^{log r}: 1.5 (A>0, clipped high at 1.28), 0.5 (A<0, clipped low at 0.8), 1.0, 10 (A<0 dual clip 3).
    ratio = torch.tensor([[1.5, 0.5, 1.0, 10.0]])
    adv = torch.tensor([[1.0, -1.0, 2.0, -1.0]])
    old = torch.zeros_like(ratio)
    loss, stats = ppo_policy_loss(
        ratio.log(), old, adv, torch.ones_like(ratio), clip_low=0.2, clip_high=0.28, dual_clip=3.0, agg_mode="token-mean"
    )
    # per token: -min(A r, A clip(r)): -1.28, +0.8, -2.0, min(10, 3) = 3
    assert loss.item() == pytest.approx((-1.28 + 0.8 - 2.0 + 3.0) / 4, abs=1e-6)
    assert stats.clip_fraction == pytest.approx(2 / 4)  # tokens 0 and 1; token 3 is bounded by the dual clip instead
    assert stats.dual_clip_fraction == pytest.approx(1 / 4)


def test_ppo_gradient_vanishes_outside_trust_region_only_in_the_clipped_direction() -> None:
    log_prob = torch.tensor([[math.log(1.5), math.log(1.5)]], requires_grad=True)
    adv = torch.tensor([[1.0, -1.0]])
    loss, _ = ppo_policy_loss(log_prob, torch.zeros(1, 2), adv, torch.ones(1, 2), clip_low=0.2, clip_high=0.2, dual_clip=None, agg_mode="token-mean")
    loss.backward()
    assert log_prob.grad is not None
    assert log_prob.grad[0, 0].item() == 0.0  # A > 0 and ratio above 1 + eps: clipped, no gradient
    assert log_prob.grad[0, 1].item() > 0.0  # A < 0: the unclipped (larger) loss keeps pushing the ratio down


def test_masked_tokens_do_not_contribute() -> None:
    log_prob = torch.randn(2, 5, requires_grad=True)
    mask = torch.tensor([[1, 1, 0, 0, 0], [0, 1, 1, 1, 0]])
    loss, _ = ppo_policy_loss(log_prob, log_prob.detach() - 0.1, torch.randn(2, 5), mask, clip_low=0.2, clip_high=0.2, dual_clip=3.0, agg_mode="token-mean")
    loss.backward()
    assert torch.all(log_prob.grad[mask == 0] == 0)


def test_kl_estimators() -> None:
    logp = torch.tensor([[math.log(0.5)]])
    ref = torch.tensor([[math.log(0.25)]])
    k1 = kl_penalty(logp, ref, "kl").item()
    assert k1 == pytest.approx(math.log(2.0))
    assert kl_penalty(logp, ref, "mse").item() == pytest.approx(0.5 * math.log(2.0) ** 2)
    # k3 = q/p - log(q/p) - 1 with q/p = 0.5
    assert kl_penalty(logp, ref, "low_var_kl").item() == pytest.approx(0.5 - math.log(0.5) - 1.0)
    assert kl_penalty(logp, logp, "low_var_kl").item() == 0.0
    with pytest.raises(ValueError):
        kl_penalty(logp, ref, "js")
