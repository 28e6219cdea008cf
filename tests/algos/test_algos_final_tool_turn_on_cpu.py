"""`estimator.final_tool_turn` on a weak-SFT group (docs/method.md#a-final-tool-call-turn): where the
tokens of cut-off and unparsable tool calls take their advantage from under each rule."""

from __future__ import annotations

import statistics

import pytest
import torch

from slca.algos import compute_slca_grpo
from slca.config.groups.estimator import SlcaGrpoEstimator

# A weak policy's group of four: rows 0-2 stopped in their only turn, a tool call (row 1 cut off by the
# length cap, rows 0 and 2 unparsable), so they never got a tool response and their summary score is
# 0; only row 3 called a tool and answered (call: tokens 0-1, answer: tokens 4-6).
MASK = torch.tensor([
    [1, 1, 1, 0, 0, 0, 0, 0],
    [1, 1, 1, 1, 0, 0, 0, 0],
    [1, 1, 1, 0, 0, 0, 0, 0],
    [1, 1, 0, 0, 1, 1, 1, 0],
], dtype=torch.float32)
LAST_TURN_IS_TOOL_CALL = [1.0, 1.0, 1.0, 0.0]
PROCESS = [0.1, 0.0, 0.35, 0.9]  # row 2's call came closest to the gold call
SUMMARY = [0.0, 0.0, 0.0, 0.5]
CALL_TOKENS = {0: [0, 1, 2], 1: [0, 1, 2, 3], 2: [0, 1, 2]}


def advantages(final_tool_turn: str) -> torch.Tensor:
    columns = {"process_score": torch.tensor(PROCESS), "summary_score": torch.tensor(SUMMARY),
               "score": torch.tensor([p + s for p, s in zip(PROCESS, SUMMARY)]),
               "last_run_is_tool_call": torch.tensor(LAST_TURN_IS_TOOL_CALL)}
    zeros = torch.zeros_like(MASK)
    config = SlcaGrpoEstimator(final_tool_turn=final_tool_turn)
    return compute_slca_grpo(zeros, MASK, ["g"] * 4, segment_rewards=columns, config=config, token_level_scores=zeros).advantages


def test_under_the_reference_rule_every_broken_call_takes_the_same_summary_penalty_and_the_good_call_nothing():
    adv = advantages("summary")
    # Summaries [0, 0, 0, 0.5]: mean 0.125, unbiased std sqrt((3 * 0.125**2 + 0.375**2) / 3) = 0.25,
    # so rows 0-2 get -0.5 and row 3's answer +1.5, whatever their calls were worth.
    for row, tokens in CALL_TOKENS.items():
        assert adv[row, tokens].tolist() == pytest.approx([-0.5] * len(tokens), abs=1e-5)
    assert adv[3, 4:7].tolist() == pytest.approx([1.5] * 3, abs=1e-5)
    # Row 3 is the only rollout with a tool segment: one present member, advantage exactly 0.
    assert adv[3, 0:2].tolist() == [0.0, 0.0]


def test_under_final_tool_turn_process_each_call_takes_its_own_process_advantage():
    adv = advantages("process")
    mean, std = statistics.fmean(PROCESS), statistics.stdev(PROCESS)
    expected = [(p - mean) / std for p in PROCESS]  # -0.590, -0.838, +0.031, +1.396
    for row, tokens in CALL_TOKENS.items():
        assert adv[row, tokens].tolist() == pytest.approx([expected[row]] * len(tokens), abs=1e-5)
    assert adv[2, 0].item() > 0  # the best broken call is pushed up, not down
    assert adv[3, 0:2].tolist() == pytest.approx([expected[3]] * 2, abs=1e-5)
    # Row 3 is now the only rollout with a summary: one present member, advantage exactly 0.
    assert adv[3, 4:7].tolist() == [0.0, 0.0, 0.0]


def test_when_every_rollout_ends_in_an_answer_the_two_rules_give_the_same_advantages():
    # With every rollout ending in an answer (no flag set) the option changes nothing.
    mask = MASK.clone()
    mask[:3] = MASK[3]
    columns = {"process_score": torch.tensor(PROCESS), "summary_score": torch.tensor([0.1, 0.4, 0.2, 0.5]),
               "score": torch.tensor([1.0] * 4), "last_run_is_tool_call": torch.zeros(4)}
    zeros = torch.zeros_like(mask)
    runs = [compute_slca_grpo(zeros, mask, ["g"] * 4, segment_rewards=columns, config=SlcaGrpoEstimator(final_tool_turn=rule),
                              token_level_scores=zeros).advantages for rule in ("summary", "process")]
    assert torch.equal(runs[0], runs[1])
