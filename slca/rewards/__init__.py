"""Rewards for tool-calling rollouts: HierR (process components + summary judge), exact match,
judges and metrics. `compute_score` is verl's custom reward function signature."""

from slca.rewards.entry import REWARDS, compute_score, compute_score_batch, get_reward, resolve_reward_config, score_records
from slca.rewards.record import RewardBatch, RewardRecord

__all__ = [
    "REWARDS",
    "RewardBatch",
    "RewardRecord",
    "compute_score",
    "compute_score_batch",
    "get_reward",
    "resolve_reward_config",
    "score_records",
]
