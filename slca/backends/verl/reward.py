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
def _reward_function(spec_path: str) -> Any:
    """The run's reward, built once per reward worker process (verl calls a module-level function,
    so the process keeps it here)."""
    from slca.backends.verl.run_spec import run_spec
    from slca.rewards import RewardFunction

    return RewardFunction(run_spec(spec_path).reward)


def compute_score(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None, *, spec_path: str, **_verl: Any) -> dict[str, Any]:
    """slca's reward row for one rollout (never raises on bad model output: it scores 0 with a reason)."""
    return _reward_function(spec_path).score(solution_str, ground_truth, extra_info)
