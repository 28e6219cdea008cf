"""Dynamic sampling (DAPO, Yu et al. 2025, as a control): drop groups whose rewards have zero
variance after generation and keep generating until the batch holds enough informative groups."""

from __future__ import annotations

from typing import Any

import torch

from slca.algos.groups import group_ids


def drop_zero_variance(rewards: torch.Tensor, index: Any) -> tuple[torch.Tensor, dict[str, int]]:
    """Rows of the groups whose rewards are not all equal.

    rewards: [N] float; index: [N] group ids. A group of one rollout has zero variance.
    Returns (kept rows, sorted LongTensor; stats: groups, dropped_groups, kept_groups, rows, kept_rows).
    """
    if rewards.dim() != 1:
        raise ValueError(f"rewards must be 1-D, got shape {tuple(rewards.shape)}")
    gid, n_groups = group_ids(index, device=rewards.device)
    x = rewards.detach().to(torch.float64)
    hi = torch.full((n_groups,), -torch.inf, dtype=x.dtype, device=x.device).scatter_reduce(0, gid, x, reduce="amax")
    lo = torch.full((n_groups,), torch.inf, dtype=x.dtype, device=x.device).scatter_reduce(0, gid, x, reduce="amin")
    varied = hi > lo
    kept = torch.nonzero(varied[gid]).flatten()
    n_kept = int(varied.sum())
    stats = {
        "groups": n_groups,
        "dropped_groups": n_groups - n_kept,
        "kept_groups": n_kept,
        "rows": int(x.numel()),
        "kept_rows": int(kept.numel()),
    }
    return kept, stats


class BatchFiller:
    """Accumulates informative groups over generation rounds until `target_groups` are kept.

    Each round: `add(rewards, index)` returns the rows of that round to keep (groups beyond the
    target are discarded, first-seen groups first). `stats()` reports rounds, generations spent,
    dropped (zero-variance) and surplus groups.
    """

    def __init__(self, target_groups: int, max_rounds: int | None = None) -> None:
        if target_groups < 1:
            raise ValueError(f"target_groups must be >= 1, got {target_groups}")
        self.target_groups = target_groups
        self.max_rounds = max_rounds
        self.rounds = 0
        self.generations = 0
        self.kept_groups = 0
        self.dropped_groups = 0
        self.surplus_groups = 0

    @classmethod
    def from_config(cls, config: Any, target_groups: int) -> BatchFiller:
        """From `slca.config.groups.filter.DynamicSamplingFilter` and the batch size in prompts."""
        return cls(target_groups, config.max_generation_rounds)

    @property
    def full(self) -> bool:
        return self.kept_groups >= self.target_groups

    @property
    def exhausted(self) -> bool:
        """No more rounds allowed (max_rounds reached) or the batch is full."""
        return self.full or (self.max_rounds is not None and self.rounds >= self.max_rounds)

    def add(self, rewards: torch.Tensor, index: Any) -> torch.Tensor:
        """Rows of this round's generations to keep (sorted LongTensor)."""
        if self.exhausted:
            raise RuntimeError("BatchFiller is full or out of rounds")
        kept, stats = drop_zero_variance(rewards, index)
        self.rounds += 1
        self.generations += stats["rows"]
        self.dropped_groups += stats["dropped_groups"]
        room = self.target_groups - self.kept_groups
        if stats["kept_groups"] > room:
            gid, _ = group_ids(index, device=rewards.device)
            kept_gid = gid[kept]
            # Keep the first `room` informative groups in order of appearance.
            order = torch.unique(kept_gid, sorted=False, return_inverse=False)
            first_pos = torch.full((int(gid.max()) + 1,), kept.numel(), dtype=torch.long, device=kept.device)
            first_pos = first_pos.scatter_reduce(0, kept_gid, torch.arange(kept.numel(), device=kept.device), reduce="amin")
            chosen = torch.argsort(first_pos[order])[:room]
            allowed = torch.zeros_like(first_pos, dtype=torch.bool)
            allowed[order[chosen]] = True
            kept = kept[allowed[kept_gid]]
            self.surplus_groups += stats["kept_groups"] - room
            self.kept_groups += room
        else:
            self.kept_groups += stats["kept_groups"]
        return kept

    def stats(self) -> dict[str, int | bool]:
        """rounds, generations (rollouts generated), kept/dropped/surplus groups, filled flag."""
        return {
            "rounds": self.rounds,
            "generations": self.generations,
            "target_groups": self.target_groups,
            "kept_groups": self.kept_groups,
            "dropped_groups": self.dropped_groups,
            "surplus_groups": self.surplus_groups,
            "filled": self.full,
        }
