"""verl's custom reward function for slca specs: `reward.custom_reward_function` names this file.

verl loads this file by path inside its reward workers and calls `compute_score` once per rollout
with the spec path bound as a keyword (`reward_kwargs.spec_path`), so every reward worker scores
with the spec's own reward config; the returned row's extra keys become verl's reward extras,
which slca's trainer reads back as `RewardRecord` fields.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=4)
def _reward_config(spec_path: str) -> Any:
    from slca.config.io import load_spec

    return load_spec(spec_path).reward


def compute_score(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None, *, spec_path: str, **_verl: Any) -> dict[str, Any]:
    """slca's reward row for one rollout (never raises on bad model output: it scores 0 with a reason)."""
    from slca.rewards.entry import compute_score as slca_compute_score

    return slca_compute_score(data_source, solution_str, ground_truth, extra_info, reward_config=_reward_config(spec_path))
