"""docs/method.md#reference-test-cases cases 20-30 for slca_grpo, plus the [FIX] additions, a no-leakage property test and
the gradient-isolation test."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from slca.algos import compute_slca_grpo, get_estimator
from slca.algos.groups import group_ids, group_normalise
from slca.config.groups.estimator import SlcaGrpoEstimator
from tests.algos.oracles import reference_runs

PAIR = 1 / math.sqrt(2)
TWO_SEGMENT_MASK = torch.tensor([[0, 1, 1, 0, 0, 1, 1, 1, 0, 0], [1, 1, 0, 0, 0, 0, 1, 1, 1, 0]], dtype=torch.float32)
ONE_GROUP = ["g0", "g0"]


def comps(process, summary, total=None, should_no_call=None):
    out = {"process_score": torch.tensor(process), "summary_score": torch.tensor(summary)}
    out["score"] = torch.tensor(total if total is not None else [0.0] * len(process))
    out["should_call_but_no_call"] = torch.tensor(should_no_call if should_no_call is not None else [0.0] * len(process))
    return out


def run(mask, seg, index=ONE_GROUP, config=None, rewards=None, scores=None):
    zeros = torch.zeros_like(mask)
    return compute_slca_grpo(
        zeros if rewards is None else rewards,
        mask,
        index,
        segment_rewards=seg,
        config=config,
        token_level_scores=zeros if scores is None else scores,
    )


def no_leak(adv, mask):
    return (adv * (1 - (mask > 0.5).float())).abs().max().item() == 0


# --- an independent, unweighted reference: plain Python loops straight from docs/method.md#slca-grpo ---


def ref_normalise(values, groups, present, eps=1e-6):
    out = [0.0] * len(values)
    for g in set(groups):
        members = [i for i, h in enumerate(groups) if h == g and present[i]]
        if len(members) < 2:
            continue
        xs = [values[i] for i in members]
        mu, sd = statistics.fmean(xs), statistics.stdev(xs)
        for i in members:
            out[i] = 0.0 if max(xs) == min(xs) else (values[i] - mu) / (sd + eps)
    return out


def ref_slca(mask, groups, seg, rewards, scores):
    n, t = mask.shape
    proc_tok, summ_tok, pp, sp = [], [], [], []
    for i in range(n):
        runs = reference_runs(mask[i].tolist())
        summ_tok.append(set(range(*runs[-1])) if runs else set())
        proc_tok.append({p for s, e in runs[:-1] for p in range(s, e)})
        pp.append(len(runs) >= 2)
        sp.append(len(runs) >= 1)
    sp_vals, ss_vals = [], []
    for i in range(n):
        total = float(seg["score"][i])
        penalty = float(seg["should_call_but_no_call"][i]) > 0.5 or total < 0
        rp = 0.0 if penalty else float(seg["process_score"][i])
        rs = total if penalty else float(seg["summary_score"][i])
        k = (rewards[i] - scores[i]).tolist()
        sp_vals.append(rp + sum(k[j] for j in proc_tok[i]))
        ss_vals.append(rs + sum(k[j] for j in summ_tok[i]))
    a_p, a_s = ref_normalise(sp_vals, groups, pp), ref_normalise(ss_vals, groups, sp)
    adv = torch.zeros(n, t)
    for i in range(n):
        for j in proc_tok[i]:
            adv[i, j] = a_p[i] * float(mask[i, j])
        for j in summ_tok[i]:
            adv[i, j] = a_s[i] * float(mask[i, j])
    return adv, torch.tensor(a_p), torch.tensor(a_s)


# --- docs/method.md#reference-test-cases cases 20-30 ---


def test_case_20_registry_lookup():
    from slca.algos.slca_grpo import slca_grpo

    assert get_estimator("slca_grpo") is slca_grpo


def test_case_21_two_segments():
    out = run(TWO_SEGMENT_MASK, comps([0.8, 0.4], [0.9, 0.5], [0.6, 0.3]))
    assert no_leak(out.advantages, TWO_SEGMENT_MASK)
    assert torch.equal(out.returns, out.advantages)
    assert out.adv_process.shape == (2,) and out.adv_summary.shape == (2,)
    np.testing.assert_allclose(out.adv_process.numpy(), [PAIR, -PAIR], atol=1e-5)
    np.testing.assert_allclose(out.adv_summary.numpy(), [PAIR, -PAIR], atol=1e-5)
    adv = out.advantages
    assert torch.all(adv[0, 1:3] == out.adv_process[0]) and torch.all(adv[0, 5:8] == out.adv_summary[0])
    assert torch.all(adv[1, 0:2] == out.adv_process[1]) and torch.all(adv[1, 6:9] == out.adv_summary[1])


def test_case_22_single_run_rows():
    mask = torch.zeros(2, 10)
    mask[0, 2:5] = 1
    mask[1, 5:9] = 1
    out = run(mask, comps([1.0, 0.5], [0.8, 0.6]))
    assert out.adv_process.tolist() == [0.0, 0.0]
    np.testing.assert_allclose(out.adv_summary.numpy(), [PAIR, -PAIR], atol=1e-5)
    assert (out.advantages[0, 2:5] != 0).all() and (out.advantages[1, 5:9] != 0).all()


def test_case_23_one_present_process_member():
    mask = torch.tensor([[0, 1, 1, 0, 0, 1, 1, 1, 0, 0], [0, 0, 0, 0, 0, 1, 1, 1, 0, 0]], dtype=torch.float32)
    out = run(mask, comps([0.9, 0.1], [0.9, 0.5]))
    assert out.adv_process.tolist() == [0.0, 0.0]
    assert out.advantages[0, 1:3].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(out.adv_summary.numpy(), [PAIR, -PAIR], atol=1e-5)
    assert (out.advantages[0, 5:8] != 0).all()


def test_case_24_negative_total_guard():
    mask = torch.tensor([[1, 1, 0, 0, 1, 1, 1, 0, 0, 0]] * 2, dtype=torch.float32)
    out = run(mask, comps([0.9, 0.3], [0.8, 0.4], [-0.5, 0.5]))
    assert no_leak(out.advantages, mask)
    # Guarded row: r_p := 0 < 0.3, r_s := -0.5 < 0.4.
    np.testing.assert_allclose(out.adv_process.numpy(), [-PAIR, PAIR], atol=1e-5)
    assert out.adv_summary[0] < 0 < out.adv_summary[1]
    assert out.penalty.tolist() == [True, False]


def test_case_25_should_no_call_guard():
    mask = torch.tensor([[1, 1, 0, 0, 1, 1, 1, 0, 0, 0]] * 2, dtype=torch.float32)
    out = run(mask, comps([0.9, 0.3], [0.8, 0.4], [0.2, 0.5], [1.0, 0.0]))
    assert out.adv_process[0] < 0 < out.adv_process[1]
    assert no_leak(out.advantages, mask)


def test_penalty_guard_flag_mode_ignores_negative_scores():
    mask = torch.tensor([[1, 1, 0, 0, 1, 1, 1, 0, 0, 0]] * 2, dtype=torch.float32)
    out = run(mask, comps([0.9, 0.3], [0.8, 0.4], [-0.5, 0.5]), config=SlcaGrpoEstimator(penalty_guard="flag"))
    assert out.penalty.tolist() == [False, False]
    np.testing.assert_allclose(out.adv_process.numpy(), [PAIR, -PAIR], atol=1e-5)


def test_case_26_kl_fold():
    mask = torch.tensor([[0, 1, 1, 0, 0, 1, 1, 1, 0, 0]] * 2, dtype=torch.float32)
    rewards = torch.zeros(2, 10)
    rewards[0, 1:3] = -0.1
    out = run(mask, comps([0.5, 0.5], [0.5, 0.5]), rewards=rewards, scores=torch.zeros(2, 10))
    np.testing.assert_allclose(out.adv_process.numpy(), [-PAIR, PAIR], atol=1e-5)
    np.testing.assert_allclose(out.adv_summary.numpy(), [0.0, 0.0], atol=1e-6)


def test_case_27_all_zero_mask():
    mask = torch.zeros(2, 10)
    out = run(mask, comps([0.8, 0.4], [0.9, 0.5], [0.6, 0.3]))
    for t in (out.advantages, out.returns, out.adv_process, out.adv_summary):
        assert t.abs().sum().item() == 0


def test_case_28_unit_weights_equal_independent_reference():
    torch.manual_seed(3)
    mask = (torch.rand(8, 24) > 0.4).float()
    groups = ["a", "a", "a", "b", "b", "b", "b", "c"]
    seg = comps(torch.rand(8).tolist(), torch.rand(8).tolist(), [0.3, -0.5, 0.2, 0.4, 0.1, 0.9, -0.5, 0.3], [0, 0, 1, 0, 0, 0, 0, 0])
    rewards = torch.randn(8, 24) * 0.05
    scores = torch.zeros(8, 24)
    out = run(mask, seg, index=groups, config=SlcaGrpoEstimator(w_process=1.0, w_summary=1.0), rewards=rewards, scores=scores)
    adv, a_p, a_s = ref_slca(mask, groups, seg, rewards, scores)
    assert a_p.abs().sum() > 0 and a_s.abs().sum() > 0  # the comparison is not vacuous
    np.testing.assert_allclose(out.adv_process.numpy(), a_p.numpy(), atol=1e-5)
    np.testing.assert_allclose(out.adv_summary.numpy(), a_s.numpy(), atol=1e-5)
    np.testing.assert_allclose(out.advantages.numpy(), adv.numpy(), atol=1e-5)


def test_case_29_weights_scale_after_normalisation():
    seg = comps([0.8, 0.4], [0.9, 0.5], [0.6, 0.3])
    base = run(TWO_SEGMENT_MASK, seg)
    weighted = run(TWO_SEGMENT_MASK, seg, config=SlcaGrpoEstimator(w_process=2.0, w_summary=3.0))
    assert base.adv_process.abs().sum() > 0 and base.adv_summary.abs().sum() > 0
    np.testing.assert_allclose(weighted.adv_process.numpy(), 2 * base.adv_process.numpy(), atol=1e-6)
    np.testing.assert_allclose(weighted.adv_summary.numpy(), 3 * base.adv_summary.numpy(), atol=1e-6)
    np.testing.assert_allclose(weighted.advantages[0, 1:3].numpy(), 2 * base.advantages[0, 1:3].numpy(), atol=1e-6)
    np.testing.assert_allclose(weighted.advantages[0, 5:8].numpy(), 3 * base.advantages[0, 5:8].numpy(), atol=1e-6)


def test_case_30_zero_process_weight():
    out = run(TWO_SEGMENT_MASK, comps([0.8, 0.4], [0.9, 0.5], [0.6, 0.3]), config=SlcaGrpoEstimator(w_process=0.0))
    assert out.adv_process.tolist() == [0.0, 0.0]
    assert out.advantages[0, 1:3].abs().sum() == 0 and out.advantages[1, 0:2].abs().sum() == 0
    assert out.adv_summary.abs().sum() > 0


# --- [FIX] additions ---


def test_final_turn_is_tool_call():
    # Row 1 was cut while its last turn was a tool call: reference treats it as the summary.
    mask = torch.tensor([[1, 1, 0, 1, 1, 1], [1, 1, 0, 1, 1, 0], [1, 1, 0, 1, 1, 0]], dtype=torch.float32)
    seg = comps([0.9, 0.5, 0.1], [0.8, 0.0, 0.4])
    ref = run(mask, seg, index=["g"] * 3)
    assert ref.summary_present.tolist() == [True, True, True]
    assert ref.advantages[1, 3:5].abs().sum() > 0  # the tool-call turn is credited as summary
    seg["last_run_is_tool_call"] = torch.tensor([0.0, 1.0, 0.0])
    fixed = run(mask, seg, index=["g"] * 3, config=SlcaGrpoEstimator(final_tool_turn="process"))
    assert fixed.summary_present.tolist() == [True, False, True]
    assert fixed.adv_summary[1].item() == 0.0
    # Row 1's whole response now carries its process advantage; summary stats pool rows 0 and 2.
    assert torch.all(fixed.advantages[1, [0, 1, 3, 4]] == fixed.adv_process[1])
    np.testing.assert_allclose(fixed.adv_summary[[0, 2]].numpy(), [PAIR, -PAIR], atol=1e-5)


def test_equal_scores_exactly_zero():
    mask = torch.tensor([[0, 1, 1, 0, 1, 1]] * 3, dtype=torch.float32)
    out = run(mask, comps([0.1, 0.1, 0.1], [0.3, 0.3, 0.3]), index=["g"] * 3)
    assert out.advantages.abs().sum().item() == 0
    assert out.adv_process.tolist() == [0.0] * 3 and out.adv_summary.tolist() == [0.0] * 3


def test_single_segment_rows_reduce_to_presence_filtered_grpo():
    torch.manual_seed(0)
    mask = torch.zeros(6, 12)
    lengths = [5, 9, 3, 12, 7, 0]  # the last row is empty: absent from the statistics
    for i, n in enumerate(lengths):
        mask[i, 12 - n :] = 1
    total = torch.rand(6)
    rewards = torch.zeros(6, 12)
    rewards[:, -1] = total
    index = ["a", "a", "a", "b", "b", "b"]
    out = run(mask, comps([0.7] * 6, total.tolist(), total.tolist()), index=index, rewards=rewards, scores=rewards)
    gid, n = group_ids(index)
    expected = group_normalise(total, gid, n, mask.sum(1) > 0)
    assert torch.equal(out.adv_summary, expected)
    np.testing.assert_allclose(out.advantages.numpy(), (expected.unsqueeze(1) * mask).numpy(), atol=0)
    # Where every row is present it is plain GRPO.
    grpo, _ = get_estimator("grpo")(rewards[:3], mask[:3], index[:3])
    np.testing.assert_allclose(out.advantages[:3].numpy(), grpo.numpy(), atol=1e-6)


def test_registered_form_fills_extras():
    extras: dict = {}
    adv, ret = get_estimator("slca_grpo")(
        torch.zeros(2, 10), TWO_SEGMENT_MASK, ONE_GROUP, segment_rewards=comps([0.8, 0.4], [0.9, 0.5]), extras=extras
    )
    assert set(extras) >= {"adv_process", "adv_summary", "process_present", "summary_present"}
    np.testing.assert_allclose(extras["adv_process"].numpy(), [PAIR, -PAIR], atol=1e-5)
    with pytest.raises(KeyError):
        get_estimator("slca_grpo")(torch.zeros(2, 10), TWO_SEGMENT_MASK, ONE_GROUP, segment_rewards={"score": [1, 0]})


def test_object_columns_with_none():
    seg = {"process_score": np.array([0.8, None], dtype=object), "summary_score": np.array([0.9, 0.5], dtype=object)}
    out = run(TWO_SEGMENT_MASK, seg)
    np.testing.assert_allclose(out.adv_process.numpy(), [PAIR, -PAIR], atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 10).flatmap(
        lambda b: st.tuples(
            st.lists(st.lists(st.sampled_from([0.0, 1.0, 1.0]), min_size=16, max_size=16), min_size=b, max_size=b),
            st.lists(st.integers(0, 2), min_size=b, max_size=b),
            st.lists(st.floats(-1, 1, width=32), min_size=b, max_size=b),
            st.lists(st.floats(-1, 1, width=32), min_size=b, max_size=b),
        )
    )
)
def test_property_no_advantage_outside_its_segment(data):
    rows, groups, proc, summ = data
    mask = torch.tensor(rows)
    out = run(mask, comps(proc, summ, summ), index=groups)
    adv = out.advantages
    for i in range(mask.shape[0]):
        runs = reference_runs(mask[i].tolist())
        summary = set(range(*runs[-1])) if runs else set()
        for j in range(mask.shape[1]):
            if j in summary:
                assert adv[i, j] == out.adv_summary[i]
            elif mask[i, j] > 0.5:
                assert adv[i, j] == out.adv_process[i]
            else:
                assert adv[i, j] == 0
    # Rows without a segment never carry that segment's advantage.
    assert torch.all(out.adv_process[~out.process_present] == 0)
    assert torch.all(out.adv_summary[~out.summary_present] == 0)


# --- gradient isolation on a toy two-segment policy ---


def _tool_logprobs_after_step(estimator, summary_noise):
    """One policy-gradient step of a tabular policy; returns the tool tokens' log-probs after it.

    Layout per rollout: 3 tool tokens (positions 0-2), 1 environment token, 3 summary tokens
    (4-6). Tool positions and summary positions have separate logit tables, so tool-token
    log-probs move only through the advantages placed on tool tokens.
    """
    n, vocab = 4, 5
    gen = torch.Generator().manual_seed(0)
    actions = torch.randint(0, vocab, (n, 7), generator=gen)
    mask = torch.tensor([[1, 1, 1, 0, 1, 1, 1]] * n, dtype=torch.float32)
    tool_reward = torch.tensor([1.0, 0.0, 0.5, 0.25])
    summary_reward = torch.tensor([0.6, 0.2, 0.9, 0.4]) + summary_noise
    total = tool_reward + summary_reward
    rewards = torch.zeros(n, 7)
    rewards[:, 6] = total
    seg = {"process_score": tool_reward, "summary_score": summary_reward, "score": total}
    adv, _ = get_estimator(estimator)(rewards, mask, ["p"] * n, segment_rewards=seg)
    logits = torch.zeros(7, vocab, requires_grad=True)  # one row per position, shared across rollouts
    logp = torch.log_softmax(logits, -1).unsqueeze(0).expand(n, -1, -1).gather(2, actions.unsqueeze(2)).squeeze(2)
    loss = -(adv * logp * mask).sum() / mask.sum()
    loss.backward()
    with torch.no_grad():
        stepped = logits - 1.0 * logits.grad
        new_logp = torch.log_softmax(stepped, -1).unsqueeze(0).expand(n, -1, -1).gather(2, actions.unsqueeze(2)).squeeze(2)
    return new_logp[:, :3]


def test_gradient_isolation_slca_vs_grpo():
    noise = torch.tensor([0.3, -0.2, 0.05, -0.4])
    slca_clean = _tool_logprobs_after_step("slca_grpo", torch.zeros(4))
    slca_noisy = _tool_logprobs_after_step("slca_grpo", noise)
    assert torch.equal(slca_clean, slca_noisy)  # summary noise leaves tool log-probs untouched
    assert not torch.allclose(slca_clean, torch.full_like(slca_clean, math.log(1 / 5)))  # but they moved
    grpo_clean = _tool_logprobs_after_step("grpo", torch.zeros(4))
    grpo_noisy = _tool_logprobs_after_step("grpo", noise)
    assert (grpo_clean - grpo_noisy).abs().max() > 1e-3  # GRPO leaks the summary noise into tool tokens


def test_mask_dtypes_give_identical_advantages():
    seg = comps([0.8, 0.4], [0.9, 0.5], [0.6, 0.3])
    base = run(TWO_SEGMENT_MASK, seg).advantages
    for dtype in (torch.int64, torch.bool):
        mask = TWO_SEGMENT_MASK.to(dtype)
        out = compute_slca_grpo(torch.zeros(2, 10), mask, ONE_GROUP, segment_rewards=seg).advantages
        assert out.dtype == torch.float32 and torch.equal(out, base)
