"""docs/method.md#credit-misattribution on constructed batches, every expectation counted by hand:
outcome estimators misattribute one segment of every segment-disagreeing rollout, SLCA-GRPO none,
except where the reference's documented rules (presence filter, omission guard, the final-turn
rule) and the KL fold say otherwise."""

from __future__ import annotations

import math

import pytest
import torch

from slca.algos import compute_slca_grpo, get_estimator, measure_misattribution
from slca.algos.misattribution import DISAGREEING_ROLLOUTS_METRIC, TOKEN_FRAC_METRIC
from slca.config.groups.estimator import SlcaGrpoEstimator

# Row 0: tool tokens 1-2, summary tokens 5-7; row 1: tool tokens 0-1, summary tokens 6-8 (10 tokens in all).
TWO_SEGMENT_MASK = torch.tensor([[0, 1, 1, 0, 0, 1, 1, 1, 0, 0], [1, 1, 0, 0, 0, 0, 1, 1, 1, 0]], dtype=torch.float32)


def outcome_rewards(mask: torch.Tensor, totals: list[float]) -> torch.Tensor:
    """[B, T] token rewards with each rollout's total on its last learnable token."""
    rewards = torch.zeros_like(mask)
    for row, total in enumerate(totals):
        rewards[row, int(torch.nonzero(mask[row]).max())] = total
    return rewards


def slca(mask, index, process, summary, *, score=None, no_call=None, last_run_is_tool_call=None, config=None, rewards=None):
    columns = {"process_score": torch.tensor(process), "summary_score": torch.tensor(summary),
               "score": torch.tensor(score if score is not None else [p + s for p, s in zip(process, summary)])}
    if no_call is not None:
        columns["should_call_but_no_call"] = torch.tensor(no_call)
    if last_run_is_tool_call is not None:
        columns["last_run_is_tool_call"] = torch.tensor(last_run_is_tool_call, dtype=torch.float32)
    zeros = torch.zeros_like(mask)
    out = compute_slca_grpo(zeros if rewards is None else rewards, mask, index, segment_rewards=columns, config=config, token_level_scores=zeros)
    return out.advantages


def measure(advantages, mask, index, process, summary, last_run_is_tool_call=None):
    flags = None if last_run_is_tool_call is None else torch.tensor(last_run_is_tool_call)
    return measure_misattribution(advantages, mask, index, torch.tensor(process), torch.tensor(summary), flags)


# Process [1.0, 0.0] around its mean 0.5 and summary [0.2, 0.6] around 0.4: row 0 is (+, -), row 1 (-, +).
DISAGREEING = dict(process=[1.0, 0.0], summary=[0.2, 0.6])


@pytest.mark.parametrize("name", ["grpo", "dr_grpo", "rloo"])
def test_an_outcome_estimator_misattributes_the_summary_of_both_disagreeing_rollouts(name):
    # Totals 1.2 > 0.6: row 0's tokens all go up (its 3 summary tokens, below their mean, wrongly),
    # row 1's all go down (its 3 summary tokens, above their mean, wrongly): 6 of 10 tokens.
    index = ["g", "g"]
    advantages, _ = get_estimator(name)(outcome_rewards(TWO_SEGMENT_MASK, [1.2, 0.6]), TWO_SEGMENT_MASK, index)
    result = measure(advantages, TWO_SEGMENT_MASK, index, **DISAGREEING)
    assert result.token_frac.item() == pytest.approx(0.6) and result.disagreeing_rollouts.item() == 2


def test_slca_grpo_misattributes_no_token_of_the_same_batch():
    index = ["g", "g"]
    advantages = slca(TWO_SEGMENT_MASK, index, **DISAGREEING)
    result = measure(advantages, TWO_SEGMENT_MASK, index, **DISAGREEING)
    assert result.token_frac.item() == 0.0 and result.disagreeing_rollouts.item() == 2


def test_a_batch_where_no_rollout_disagrees_has_no_fraction_and_a_zero_count():
    # Row 0 is above both means, row 1 below both: nothing to misattribute.
    index = ["g", "g"]
    advantages, _ = get_estimator("grpo")(outcome_rewards(TWO_SEGMENT_MASK, [1.7, 0.3]), TWO_SEGMENT_MASK, index)
    result = measure(advantages, TWO_SEGMENT_MASK, index, process=[0.9, 0.1], summary=[0.8, 0.2])
    assert math.isnan(result.token_frac.item()) and result.disagreeing_rollouts.item() == 0
    metrics = result.metrics()
    assert set(metrics) == {TOKEN_FRAC_METRIC, DISAGREEING_ROLLOUTS_METRIC} and metrics[DISAGREEING_ROLLOUTS_METRIC] == 0.0


def test_a_zero_advantage_contradicts_no_segment():
    result = measure(torch.zeros_like(TWO_SEGMENT_MASK), TWO_SEGMENT_MASK, ["g", "g"], **DISAGREEING)
    assert result.token_frac.item() == 0.0 and result.disagreeing_rollouts.item() == 2


def test_each_rollout_is_judged_against_the_means_of_its_own_group():
    # Every row: tool tokens 0-1, summary token 3. Group a: process [0.9, 0.1], summary [0.1, 0.9]:
    # both disagree. Group b: process [0.5, 0.6], summary [0.95, 0.96]: (-, -) and (+, +), none
    # disagrees (pooled over all four rows, row 2 would: process mean 0.525, summary mean 0.7275).
    mask = torch.tensor([[1, 1, 0, 1]] * 4, dtype=torch.float32)
    advantages = torch.ones(4, 4) * mask  # every token pushed up
    result = measure(advantages, mask, ["a", "a", "b", "b"], process=[0.9, 0.1, 0.5, 0.6], summary=[0.1, 0.9, 0.95, 0.96])
    # Row 0's summary token (1) and row 1's two tool tokens are pushed against their side: 3 of 6.
    assert result.disagreeing_rollouts.item() == 2 and result.token_frac.item() == pytest.approx(0.5)


def test_the_presence_filter_can_flip_a_tool_segment_against_its_group_mean():
    # Row 2 answered without a call (one run, no tool segment) and its process score 0.0 pulls the
    # group's process mean to 1.3/3 = 0.433, so row 0's 0.5 is above it; SLCA-GRPO normalises the tool
    # segment over rows 0 and 1 only (mean 0.65), where row 0's 0.5 is below: its 2 tool tokens go down.
    mask = torch.tensor([[1, 1, 0, 1, 1, 1], [1, 0, 0, 1, 1, 0], [1, 1, 1, 1, 0, 0]], dtype=torch.float32)
    index = ["g"] * 3
    scores = dict(process=[0.5, 0.8, 0.0], summary=[0.2, 0.6, 0.7])  # summary mean 0.5: sides -, +, +
    flags = [False, False, False]
    # Disagreeing: row 0 (+, -) with 5 tokens and row 2 (-, +) with 4: 9 tokens.
    result = measure(slca(mask, index, **scores), mask, index, **scores, last_run_is_tool_call=flags)
    assert result.disagreeing_rollouts.item() == 2 and result.token_frac.item() == pytest.approx(2 / 9)
    # GRPO on totals [0.7, 1.4, 0.7] (mean 0.933): rows 0 and 2 go down, so row 0's 2 tool tokens and
    # row 2's 4 summary tokens are misattributed: 6 of 9.
    grpo, _ = get_estimator("grpo")(outcome_rewards(mask, [0.7, 1.4, 0.7]), mask, index)
    assert measure(grpo, mask, index, **scores, last_run_is_tool_call=flags).token_frac.item() == pytest.approx(6 / 9)


def test_the_omission_guard_can_lift_a_summary_above_its_group_mean():
    # Row 2 made no call where one was needed: its summary score is 0.0 but the guard normalises it
    # as its total, -0.5. The group's summary mean is 0.85/3 = 0.283 in the scores, 0.35/3 = 0.117 in
    # the estimator: row 0's 0.25 is below the first and above the second, so its 3 summary tokens go up.
    mask = torch.tensor([[1, 1, 0, 1, 1, 1], [1, 0, 0, 1, 1, 0], [0, 0, 1, 1, 1, 1]], dtype=torch.float32)
    index = ["g"] * 3
    scores = dict(process=[0.9, 0.3, 0.0], summary=[0.25, 0.6, 0.0])  # process mean 0.4: sides +, -, -
    # Disagreeing: row 0 (+, -) with 5 tokens and row 1 (-, +) with 3; row 2 is (-, -): 8 tokens.
    guarded = slca(mask, index, **scores, score=[1.15, 0.9, -0.5], no_call=[0.0, 0.0, 1.0])
    result = measure(guarded, mask, index, **scores)
    assert result.disagreeing_rollouts.item() == 2 and result.token_frac.item() == pytest.approx(3 / 8)
    # The same rollouts with the guard silent: row 0's summary stays below the mean it is normalised against.
    silent = slca(mask, index, **scores, score=[1.15, 0.9, 0.0], no_call=[0.0, 0.0, 0.0])
    assert measure(silent, mask, index, **scores).token_frac.item() == 0.0


# Row 0 was cut off in its only turn, a tool call; rows 1 and 2 called a tool and answered.
CUT_OFF_MASK = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 0, 0, 1, 1], [1, 0, 0, 1, 1, 1]], dtype=torch.float32)
CUT_OFF_FLAGS = [True, False, False]
# Process mean 0.533 (sides +, +, -), summary mean 0.4 (sides -, -, +): all three rows disagree, 12 tokens.
CUT_OFF_SCORES = dict(process=[0.6, 1.0, 0.0], summary=[0.0, 0.2, 1.0])


def test_the_reference_final_turn_rule_credits_a_cut_off_call_with_the_summary_advantage():
    # Reference rule: row 0's one run is its summary, z-scored from summaries [0.0, 0.2, 1.0] and below
    # their mean, so its 4 call tokens (a tool segment above its mean) go down: 4 of 12.
    index = ["g"] * 3
    reference = slca(CUT_OFF_MASK, index, **CUT_OFF_SCORES)
    result = measure(reference, CUT_OFF_MASK, index, **CUT_OFF_SCORES, last_run_is_tool_call=CUT_OFF_FLAGS)
    assert result.disagreeing_rollouts.item() == 3 and result.token_frac.item() == pytest.approx(4 / 12)


def test_final_tool_turn_process_removes_the_cut_off_calls_misattribution():
    index = ["g"] * 3
    process = slca(CUT_OFF_MASK, index, **CUT_OFF_SCORES, last_run_is_tool_call=CUT_OFF_FLAGS,
                   config=SlcaGrpoEstimator(final_tool_turn="process"))
    result = measure(process, CUT_OFF_MASK, index, **CUT_OFF_SCORES, last_run_is_tool_call=CUT_OFF_FLAGS)
    assert result.token_frac.item() == 0.0
    # GRPO on totals [0.6, 1.2, 1.0] (mean 0.933): row 0 down (4 call tokens wrong), rows 1 and 2 up
    # (row 1's 2 summary tokens and row 2's 1 call token wrong): 7 of 12.
    grpo, _ = get_estimator("grpo")(outcome_rewards(CUT_OFF_MASK, [0.6, 1.2, 1.0]), CUT_OFF_MASK, index)
    result = measure(grpo, CUT_OFF_MASK, index, **CUT_OFF_SCORES, last_run_is_tool_call=CUT_OFF_FLAGS)
    assert result.token_frac.item() == pytest.approx(7 / 12)


def test_a_kl_term_folded_into_the_reward_can_flip_a_tool_segment():
    # Row 0's tool tokens carry KL -0.25 each: its tool score becomes 0.6 - 0.5 = 0.1, below row 1's
    # 0.4, so both rows' 2 tool tokens go against their side (process 0.6 vs 0.4): 4 of 10.
    index = ["g", "g"]
    rewards = torch.zeros_like(TWO_SEGMENT_MASK)
    rewards[0, 1:3] = -0.25
    scores = dict(process=[0.6, 0.4], summary=[0.4, 0.6])
    result = measure(slca(TWO_SEGMENT_MASK, index, **scores, rewards=rewards), TWO_SEGMENT_MASK, index, **scores)
    assert result.disagreeing_rollouts.item() == 2 and result.token_frac.item() == pytest.approx(0.4)


def test_the_report_plots_the_metrics_under_the_names_the_trainers_log():
    from slca.report.figures import SECTIONS

    sources = {panel.source for section in SECTIONS for panel in section.panels}
    assert {TOKEN_FRAC_METRIC, DISAGREEING_ROLLOUTS_METRIC} <= sources
