"""Rewards for tool-calling rollouts: HierR (process components + summary judge), exact match,
judges and metrics. `compute_score` is verl's custom reward function signature."""

from slca.rewards.entry import REWARDS, compute_score, compute_score_batch, get_reward, resolve_reward_config

__all__ = ["REWARDS", "compute_score", "compute_score_batch", "get_reward", "resolve_reward_config"]
