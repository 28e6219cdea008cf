"""Group statistics over rollout groups, vectorised with index_add (no Python loop per row).

`index` (the `uid` column) holds one hashable group id per rollout. Statistics are computed in
float64 on B-sized vectors (cheap) and returned as float32, the dtype of the reference (docs/method.md#presence-filtered-group-normaliser).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import torch

SingletonRule = Literal["zero", "reference"]


def group_ids(index: Any, device: torch.device | str | None = None) -> tuple[torch.Tensor, int]:
    """Map group ids to dense ints.

    index: [B] tensor, numpy array or sequence of hashables (uuid strings, ints, ...).
    Returns (gid LongTensor [B] in 0..G-1, in order of first appearance, G).
    """
    if isinstance(index, torch.Tensor):
        if index.dim() != 1:
            raise ValueError(f"index must be 1-D, got shape {tuple(index.shape)}")
        _, gid = torch.unique(index, return_inverse=True)
        gid = gid.to(device if device is not None else index.device)
        return gid, int(gid.max().item()) + 1 if gid.numel() else 0
    if isinstance(index, np.ndarray) and index.dtype.kind in "biuf":
        if index.ndim != 1:
            raise ValueError(f"index must be 1-D, got shape {index.shape}")
        _, inv = np.unique(index, return_inverse=True)
        gid = torch.from_numpy(inv.astype(np.int64).reshape(-1))
        return gid.to(device) if device is not None else gid, int(inv.max()) + 1 if inv.size else 0
    # Arbitrary hashables (uuid strings in verl's object array): one dict pass, first-seen order.
    lookup: dict[Any, int] = {}
    ids = [lookup.setdefault(key, len(lookup)) for key in _as_sequence(index)]
    gid = torch.tensor(ids, dtype=torch.long, device=device)
    return gid, len(lookup)


def _as_sequence(index: Any) -> Sequence[Any]:
    if isinstance(index, np.ndarray):
        if index.ndim != 1:
            raise ValueError(f"index must be 1-D, got shape {index.shape}")
        return index.tolist()
    return list(index)


def _scatter(values: torch.Tensor, gid: torch.Tensor, n_groups: int) -> torch.Tensor:
    return torch.zeros(n_groups, dtype=values.dtype, device=values.device).index_add_(0, gid, values)


def group_normalise(
    scores: torch.Tensor,
    gid: torch.Tensor,
    n_groups: int,
    present: torch.Tensor | None = None,
    *,
    norm_by_std: bool = True,
    eps: float = 1e-6,
    singleton: SingletonRule = "zero",
) -> torch.Tensor:
    """Group-normalised advantage per rollout (docs/method.md#presence-filtered-group-normaliser, and stock GRPO with singleton="reference").

    scores: [B] float; gid: [B] long in 0..n_groups-1; present: [B] bool or None (all present).
    Only present members enter a group's statistics; absent members get exactly 0.
    Groups with <= 1 present member: 0 (singleton="zero", docs/method.md#presence-filtered-group-normaliser) or the stock-GRPO fallback
    mu=0, sigma=1 (singleton="reference", docs/method.md#baseline-estimators). Otherwise A = (x - mean) / (std + eps) with
    the unbiased std, or x - mean when not norm_by_std. Groups whose present scores are all
    equal get exactly 0 (the float mean of equal numbers can miss them by one ulp).
    Returns float32 [B].
    """
    x = scores.detach().to(torch.float64).reshape(-1)
    if present is None:
        present = torch.ones_like(x, dtype=torch.bool)
    present = present.to(device=x.device, dtype=torch.bool).reshape(-1)
    if x.numel() == 0:
        return torch.zeros(0, dtype=torch.float32, device=scores.device)
    w = present.to(torch.float64)
    count = _scatter(w, gid, n_groups)
    mean = _scatter(x * w, gid, n_groups) / count.clamp_min(1.0)
    centred = (x - mean[gid]) * w
    var = _scatter(centred * centred, gid, n_groups) / (count - 1.0).clamp_min(1.0)
    hi = torch.full((n_groups,), -torch.inf, dtype=torch.float64, device=x.device)
    lo = torch.full((n_groups,), torch.inf, dtype=torch.float64, device=x.device)
    hi = hi.scatter_reduce(0, gid, x.masked_fill(~present, -torch.inf), reduce="amax")
    lo = lo.scatter_reduce(0, gid, x.masked_fill(~present, torch.inf), reduce="amin")
    adv = centred / (var.sqrt()[gid] + eps) if norm_by_std else centred
    pooled = count[gid] >= 2
    adv = torch.where(pooled & (hi[gid] > lo[gid]), adv, torch.zeros_like(adv))
    if singleton == "reference":
        lone = (count[gid] == 1) & present
        adv = torch.where(lone, x / (1.0 + eps) if norm_by_std else x, adv)
    elif singleton != "zero":
        raise ValueError(f"singleton must be 'zero' or 'reference', got {singleton!r}")
    return (adv * w).to(torch.float32)


def leave_one_out(scores: torch.Tensor, gid: torch.Tensor, n_groups: int) -> torch.Tensor:
    """RLOO advantage x_i - mean of the other members (Ahmadian et al. 2024); singletons and equal groups get 0. float32 [B]."""
    x = scores.detach().to(torch.float64).reshape(-1)
    count = _scatter(torch.ones_like(x), gid, n_groups)[gid]
    total = _scatter(x, gid, n_groups)[gid]
    hi = torch.full((n_groups,), -torch.inf, dtype=x.dtype, device=x.device).scatter_reduce(0, gid, x, reduce="amax")
    lo = torch.full((n_groups,), torch.inf, dtype=x.dtype, device=x.device).scatter_reduce(0, gid, x, reduce="amin")
    varied = (count >= 2) & (hi[gid] > lo[gid])
    adv = torch.where(varied, x - (total - x) / (count - 1.0).clamp_min(1.0), torch.zeros_like(x))
    return adv.to(torch.float32)
