"""The plain-verl reward of benchmarks/verl_overhead.py (verl's `custom_reward_function` contract):
the same HierR scoring as slca's reward entry, returned as verl's plain float score (no extras)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _scorer(spec_path: str) -> Any:
    """slca's scorer for the run's reward config, built once per reward worker."""
    from slca.backends.verl.run_spec import run_spec
    from slca.rewards import RewardFunction

    return RewardFunction(run_spec(spec_path).reward)


def compute_score(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None, *, spec_path: str, **_verl: Any) -> float:
    """The rollout's HierR score."""
    return float(_scorer(spec_path).score(solution_str, ground_truth, extra_info)["score"])
