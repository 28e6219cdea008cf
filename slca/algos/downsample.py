"""Down-sampling: of the n rollouts of each prompt keep m for the update (PODS, Xu et al. 2025).

The kernels (`max_variance`, `random_subset`, `max_variance_segment_sum`) are pure functions
`fn(rewards, index, m, **options) -> LongTensor` of kept row indices, sorted ascending; groups
with at most m rows are kept whole. The registry maps each `downsample` config option to
`fn(config, rewards: RewardBatch, index, *, extras=None) -> LongTensor`; `downsample_from_config`
dispatches through it. Advantages are then computed on the kept subset. `extras` (an optional
dict) receives diagnostics such as the search method used.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import torch

from slca.algos.groups import group_ids
from slca.registry import Registry
from slca.rewards.record import RewardBatch

Downsampler = Callable[..., torch.Tensor]
DOWNSAMPLERS: Registry[Downsampler] = Registry("downsampler")

EXACT_SEGMENT_SUM_MAX_N = 16  # C(16, 8) = 12,870 subsets per group: exact search stays cheap


def register_downsampler(name: str) -> Callable[[Downsampler], Downsampler]:
    """Decorator registering the down-sampler of config option `name`:
    `fn(config, rewards: RewardBatch, index, *, extras=None) -> LongTensor`; duplicates raise."""
    return DOWNSAMPLERS.register(name)


def get_downsampler(name: str) -> Downsampler:
    """The down-sampler of config option `name` (KeyError listing the known names)."""
    return DOWNSAMPLERS.get(name)


def _grouped_order(keys: torch.Tensor, gid: torch.Tensor, n_groups: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Rows ordered by (group, key): (perm [B], position of perm[j] within its group [B], counts [G])."""
    perm = torch.argsort(keys, stable=True)
    perm = perm[torch.argsort(gid[perm], stable=True)]
    counts = torch.bincount(gid, minlength=n_groups)
    offsets = torch.cumsum(counts, 0) - counts
    pos = torch.arange(gid.numel(), device=gid.device) - offsets[gid[perm]]
    return perm, pos, counts


def _check(rewards: torch.Tensor, m: int, ndim: int) -> None:
    if rewards.dim() != ndim:
        raise ValueError(f"rewards must be {ndim}-D, got shape {tuple(rewards.shape)}")
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")


def max_variance(rewards: torch.Tensor, index: Any, m: int, *, extras: dict | None = None) -> torch.Tensor:
    """Per group, the m rows of maximal reward variance (PODS max-variance rule).

    rewards: [N] float; index: [N] group ids. Among subsets "m' lowest + (m - m') highest" of the
    sorted group, m' = 0..m, pick the largest variance (the optimum has this form; exact,
    O(n log n)). Ties go to the smallest m'. With binary rewards this keeps m/2 of each class where
    both have that many. Returns sorted LongTensor of kept rows.
    """
    _check(rewards, m, 1)
    gid, n_groups = group_ids(index, device=rewards.device)
    n = rewards.shape[0]
    if n == 0:
        return torch.zeros(0, dtype=torch.long, device=rewards.device)
    x = rewards.detach().to(torch.float64)
    perm, pos, counts = _grouped_order(x, gid, n_groups)
    width = int(counts.max())
    # Groups padded to [G, width] in sorted order; prefix sums give every candidate's moments.
    grid = torch.zeros(n_groups, width, dtype=torch.float64, device=x.device)
    grid[gid[perm], pos] = x[perm]
    zero = torch.zeros(n_groups, 1, dtype=torch.float64, device=x.device)
    p1 = torch.cat([zero, grid.cumsum(1)], 1)
    p2 = torch.cat([zero, (grid * grid).cumsum(1)], 1)
    mm = min(m, width)
    low = torch.arange(mm + 1, device=x.device)  # m' lowest
    size = torch.minimum(counts, torch.tensor(m, device=x.device)).unsqueeze(1)  # [G, 1]
    low_n = torch.minimum(low.unsqueeze(0), size)  # [G, m+1]
    high_n = size - low_n
    cnt = counts.unsqueeze(1)
    s1 = p1.gather(1, low_n) + p1.gather(1, cnt.expand_as(low_n)) - p1.gather(1, cnt - high_n)
    s2 = p2.gather(1, low_n) + p2.gather(1, cnt.expand_as(low_n)) - p2.gather(1, cnt - high_n)
    k = size.to(torch.float64)
    var = s2 / k - (s1 / k) ** 2
    best = var.argmax(dim=1)  # first maximum: smallest m'
    best_low = low_n.gather(1, best.unsqueeze(1)).squeeze(1)
    best_high = size.squeeze(1) - best_low
    g_sorted = gid[perm]
    keep_sorted = (pos < best_low[g_sorted]) | (pos >= counts[g_sorted] - best_high[g_sorted])
    kept = perm[keep_sorted]
    if extras is not None:
        extras["method"] = "exact"
        extras["kept_low"] = best_low
    return torch.sort(kept).values


def random_subset(rewards: torch.Tensor, index: Any, m: int, *, seed: int = 0, extras: dict | None = None) -> torch.Tensor:
    """m rows per group uniformly at random (seeded; the control for max_variance). Sorted LongTensor."""
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    gid, n_groups = group_ids(index, device=rewards.device)
    gen = torch.Generator(device="cpu").manual_seed(int(seed))
    keys = torch.rand(rewards.shape[0], generator=gen, dtype=torch.float64).to(rewards.device)
    perm, pos, _ = _grouped_order(keys, gid, n_groups)
    return torch.sort(perm[pos < m]).values


@lru_cache(maxsize=64)
def _subsets(n: int, m: int) -> torch.Tensor:
    """[C(n, m), n] float64 indicator matrix of every m-subset of range(n)."""
    combos = torch.tensor(list(itertools.combinations(range(n), m)), dtype=torch.long)
    ind = torch.zeros(combos.shape[0], n, dtype=torch.float64)
    ind.scatter_(1, combos, 1.0)
    return ind


def _sum_variance(values: torch.Tensor, subset: torch.Tensor) -> torch.Tensor:
    """Sum over columns of the population variance of values[subset]. values [n, S], subset [n] bool."""
    sel = values[subset]
    return sel.var(dim=0, unbiased=False).sum()


def _greedy_subset(values: torch.Tensor, m: int) -> torch.Tensor:
    """Local search for the m rows maximising the summed column variance (n > exact limit).

    Start from the best extremes split of the summed reward, then apply the best single swap
    while it improves. Returns [n] bool.
    """
    n = values.shape[0]
    total = values.sum(dim=1)
    order = torch.argsort(total, stable=True)
    best_mask, best_val = None, -torch.inf
    for low in range(m + 1):
        mask = torch.zeros(n, dtype=torch.bool)
        mask[order[:low]] = True
        mask[order[n - (m - low) :]] = True
        val = float(_sum_variance(values, mask))
        if val > best_val + 1e-12:
            best_mask, best_val = mask, val
    assert best_mask is not None
    for _ in range(4 * n):
        inside = torch.nonzero(best_mask).flatten().tolist()
        outside = torch.nonzero(~best_mask).flatten().tolist()
        swap, swap_val = None, best_val
        for i in inside:
            for j in outside:
                trial = best_mask.clone()
                trial[i], trial[j] = False, True
                val = float(_sum_variance(values, trial))
                if val > swap_val + 1e-12:
                    swap, swap_val = trial, val
        if swap is None:
            break
        best_mask, best_val = swap, swap_val
    return best_mask


def max_variance_segment_sum(rewards: torch.Tensor, index: Any, m: int, *, extras: dict | None = None) -> torch.Tensor:
    """Per group, the m rows maximising the sum of the per-column variances (an option beyond PODS).

    rewards: [N, S] (e.g. tool and summary rewards). The extremes rule is exact only for one
    reward, so groups with n <= 16 are searched exhaustively and larger groups greedily (best
    extremes split of the summed reward, then best single swaps). extras["method"] is "exact",
    "greedy" or "mixed"; extras["greedy_groups"] counts greedy groups. Sorted LongTensor.
    """
    _check(rewards, m, 2)
    gid, n_groups = group_ids(index, device=rewards.device)
    x = rewards.detach().to(torch.float64).cpu()
    gid_cpu = gid.cpu()
    kept: list[torch.Tensor] = []
    n_exact = n_greedy = 0
    by_size: dict[int, list[int]] = {}
    counts = torch.bincount(gid_cpu, minlength=n_groups)
    for g, c in enumerate(counts.tolist()):
        by_size.setdefault(c, []).append(g)
    perm = torch.argsort(gid_cpu, stable=True)
    starts = (torch.cumsum(counts, 0) - counts).tolist()
    for size, groups in by_size.items():
        rows = torch.stack([perm[starts[g] : starts[g] + size] for g in groups])  # [G_s, size]
        if size <= m:
            kept.append(rows.flatten())
        elif size <= EXACT_SEGMENT_SUM_MAX_N:
            n_exact += len(groups)
            ind = _subsets(size, m)  # [C, size]
            vals = x[rows]  # [G_s, size, S]
            s1 = torch.einsum("cn,gns->gcs", ind, vals)
            s2 = torch.einsum("cn,gns->gcs", ind, vals * vals)
            score = (s2 / m - (s1 / m) ** 2).sum(-1)  # [G_s, C]
            choice = ind[score.argmax(dim=1)].bool()  # [G_s, size]
            kept.append(rows[choice])
        else:
            n_greedy += len(groups)
            for r in rows:
                kept.append(r[_greedy_subset(x[r], m)])
    if extras is not None:
        extras["method"] = "greedy" if n_exact == 0 and n_greedy else ("mixed" if n_greedy else "exact")
        extras["greedy_groups"] = n_greedy
        extras["exact_groups"] = n_exact
    out = torch.cat(kept) if kept else torch.zeros(0, dtype=torch.long)
    return torch.sort(out).values.to(rewards.device)


# `max_variance` config `reward` -> the [N] (or [N, S]) tensor that drives the choice.
_DRIVERS: dict[str, Callable[[RewardBatch], torch.Tensor]] = {
    "total": lambda rb: rb.need("score", "downsample.reward=total"),
    "tool": lambda rb: rb.need("process", "downsample.reward=tool"),
    "summary": lambda rb: rb.need("summary", "downsample.reward=summary"),
    "segment_sum": lambda rb: torch.stack(
        [rb.need("process", "downsample.reward=segment_sum"), rb.need("summary", "downsample.reward=segment_sum")], dim=1
    ),
}


def _m(config: Any) -> int:
    if config.m is None:
        raise ValueError(f"downsample.m is unset for {config.name!r}: a composed spec resolves it against train.rl.n (Spec)")
    return int(config.m)


@register_downsampler("none")
def _keep_all(config: Any, rewards: RewardBatch, index: Any, *, extras: dict | None = None) -> torch.Tensor:
    """Every row (the update uses all n rollouts)."""
    n = len(rewards)
    device = rewards.score.device if rewards.score is not None else None
    return torch.arange(n, device=device)


@register_downsampler("max_variance")
def _max_variance(config: Any, rewards: RewardBatch, index: Any, *, extras: dict | None = None) -> torch.Tensor:
    """PODS max-variance on the reward `config.reward` names (two columns for segment_sum)."""
    driver = _DRIVERS[config.reward](rewards)
    kernel = max_variance if driver.dim() == 1 else max_variance_segment_sum
    return kernel(driver, index, _m(config), extras=extras)


@register_downsampler("random")
def _random(config: Any, rewards: RewardBatch, index: Any, *, extras: dict | None = None) -> torch.Tensor:
    """m rows per group at random (the control)."""
    return random_subset(rewards.need("score", "downsample=random"), index, _m(config), seed=config.seed, extras=extras)


def downsample_from_config(config: Any, rewards: RewardBatch, index: Any, *, extras: dict | None = None) -> torch.Tensor:
    """Kept rows (sorted LongTensor) for a `slca.config.groups.downsample` option (m as the
    validated spec holds it), through the registry; rewards: the batch's RewardBatch, index: [N] group ids."""
    return get_downsampler(config.name)(config, rewards, index, extras=extras)
