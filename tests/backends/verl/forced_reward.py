"""A test reward for the suite's verl run: slca's own reward row, with the normalised reward the
pre-rollout filter reads forced all-correct for the even RL prompts (by `extra_info.index`) and
capped below any success threshold for the odd ones, so which prompts the filter must skip is known
before the run; the scores the estimator learns from are slca's own. verl loads this file by
path (`reward.custom_reward_function.path`) and passes the spec path as slca's does."""

from __future__ import annotations

from typing import Any

from slca.backends.verl.reward import compute_score as slca_score


def compute_score(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None, **kwargs: Any) -> dict[str, Any]:
    row = dict(slca_score(data_source, solution_str, ground_truth, extra_info, **kwargs))
    # Only what the filter reads (the normalised reward) is forced: the scores the estimator and the
    # down-sampler read stay slca's own, so the updates are driven by the real reward.
    if int((extra_info or {}).get("index", -1)) % 2 == 0:
        row.update(weighted_score_norm=1.0, success=1)
    else:
        row["weighted_score_norm"] = min(float(row.get("weighted_score_norm", 0.0)), 0.5)
        row["success"] = 0
    return row
