"""Credit misattribution: how many tokens an estimator pushes against their own segment's merit
(docs/method.md#credit-misattribution).

SLCA-GRPO's claim (the SLCA-GRPO paper) is that one scalar reward per rollout misattributes credit
when a rollout's tool calls and its final answer are good in different directions: a rollout with
correct calls and a poor summary pushes its correct calls down, and the reverse. This measures
exactly that, for any estimator, from the advantages it produced.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from slca.algos.groups import group_ids, group_normalise
from slca.toolcall.segments import split_segments

TOKEN_FRAC_METRIC = "credit/misattributed_token_frac"
DISAGREEING_ROLLOUTS_METRIC = "credit/disagreeing_rollouts"


@dataclass(frozen=True)
class Misattribution:
    """token_frac: float32 0-d, misattributed tokens / learnable tokens of the disagreeing
    rollouts (NaN when no rollout disagrees: there is nothing to misattribute);
    disagreeing_rollouts: int64 0-d, rollouts whose tool and summary scores sit on opposite sides
    of their group means."""

    token_frac: torch.Tensor
    disagreeing_rollouts: torch.Tensor

    def metrics(self) -> dict[str, float]:
        """The two per-step metrics under the names both trainers log and the report plots."""
        return {TOKEN_FRAC_METRIC: float(self.token_frac), DISAGREEING_ROLLOUTS_METRIC: float(self.disagreeing_rollouts)}


def measure_misattribution(
    advantages: torch.Tensor,
    response_mask: torch.Tensor,
    index: Any,
    process_score: torch.Tensor,
    summary_score: torch.Tensor,
    last_run_is_tool_call: torch.Tensor | None = None,
) -> Misattribution:
    """Share of the tokens of segment-disagreeing rollouts whose advantage has the sign opposite
    to their own segment's (docs/method.md#credit-misattribution).

    advantages: [B, T] float, any estimator's token advantages; response_mask: [B, T] (learnable
    iff > 0.5); index: [B] group ids; process_score, summary_score: [B] float, the reward record's
    raw segment scores (no presence filter, no omission guard, no KL: the merit the estimator is
    judged against); last_run_is_tool_call: [B] bool or None. A segment's sign is that of its score
    minus its mean over the whole group. A token's own segment is the tool segment when it lies in
    a tool-call turn (every run before the last, and the last run when the rollout says it opens a
    tool call), the summary segment otherwise; without the flags the mask topology alone decides.
    An advantage of exactly 0 contradicts nothing.
    """
    device = advantages.device
    gid, n_groups = group_ids(index, device=device)
    # group_normalise without std is score - group mean (0 for lone or all-equal groups): its sign is the segment's side.
    tool_side = torch.sign(group_normalise(process_score.to(device), gid, n_groups, norm_by_std=False))
    summary_side = torch.sign(group_normalise(summary_score.to(device), gid, n_groups, norm_by_std=False))
    disagreeing = tool_side * summary_side < 0
    turn_rule = "summary" if last_run_is_tool_call is None else "process"
    tool_tokens, summary_tokens, _, _ = split_segments(response_mask, last_run_is_tool_call=last_run_is_tool_call, final_tool_turn=turn_rule)
    own_side = tool_tokens * tool_side.unsqueeze(1) + summary_tokens * summary_side.unsqueeze(1)
    counted = (tool_tokens | summary_tokens) & disagreeing.unsqueeze(1)
    contradicting = counted & (torch.sign(advantages.detach()).to(own_side.dtype) * own_side < 0)
    n_counted = int(counted.sum())
    frac = int(contradicting.sum()) / n_counted if n_counted else math.nan
    return Misattribution(torch.tensor(frac, dtype=torch.float32), disagreeing.sum().to(torch.int64))
