"""A test reward for the efficiency run: slca's own reward row, with the even RL prompts (by
`extra_info.index`) forced all-correct and the odd ones capped below any success threshold, so
which prompts the pre-rollout filter must skip is known before the run. verl loads this file by
path (`reward.custom_reward_function.path`) and passes the spec path as slca's does."""

from __future__ import annotations

from typing import Any

from slca.backends.verl.reward import compute_score as slca_score


def compute_score(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None, **kwargs: Any) -> dict[str, Any]:
    row = dict(slca_score(data_source, solution_str, ground_truth, extra_info, **kwargs))
    if int((extra_info or {}).get("index", -1)) % 2 == 0:
        row.update(score=1.0, process_score=1.0, summary_score=1.0, weighted_score_norm=1.0, success=1)
    else:
        row["weighted_score_norm"] = min(float(row.get("weighted_score_norm", 0.0)), 0.5)
        row["success"] = 0
    return row
