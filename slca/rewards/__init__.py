"""Rewards for tool-calling rollouts: HierR (process components + summary judge), exact match,
judges and metrics. A run builds one `RewardFunction` and passes it down; `compute_score` is verl's
custom reward function signature."""

from slca.rewards.entry import REWARDS, RewardFunction, compute_score, compute_score_batch, resolve_reward_config, score_records
from slca.rewards.record import RewardBatch, RewardRecord

__all__ = [
    "REWARDS",
    "RewardBatch",
    "RewardFunction",
    "RewardRecord",
    "compute_score",
    "compute_score_batch",
    "resolve_reward_config",
    "score_records",
]
