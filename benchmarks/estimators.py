"""Advantage estimators and down-sampling at the reference scale, against verl's own GRPO.

2,048 rollouts x 8,192 response tokens, groups of 16 (uid strings as in verl), multi-turn
response masks (2-5 assistant turns separated by environment tokens, then padding). Times are
the minimum (and median) over interleaved repetitions, all measured in the same run.

    .venv/bin/python benchmarks/estimators.py [--quick] [--reps 7] [--threads N]

Targets (issue 5 item 7): slca_grpo <= 1.5x verl's grpo; down-sampling < 5 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from slca.algos import get_estimator  # noqa: E402
from slca.algos.downsample import max_variance, max_variance_segment_sum, random_subset  # noqa: E402


def make_batch(batch: int, length: int, group: int, seed: int = 0) -> dict:
    """Tensors shaped like verl's at compute_advantage: rewards/scores on the last valid token."""
    gen = torch.Generator().manual_seed(seed)
    pos = torch.arange(length)
    valid = torch.randint(length // 4, length + 1, (batch,), generator=gen)
    mask = (pos.unsqueeze(0) < valid.unsqueeze(1)).float()
    turns = torch.randint(2, 6, (batch,), generator=gen)
    for k in range(4):  # environment gaps (tool responses) between assistant turns
        start = (valid * (k + 1) // (turns + 1)).unsqueeze(1)
        width = torch.randint(20, 300, (batch, 1), generator=gen)
        gap = (pos.unsqueeze(0) >= start) & (pos.unsqueeze(0) < start + width) & (k + 1 < turns).unsqueeze(1)
        mask[gap] = 0.0
    total = torch.rand(batch, generator=gen)
    rewards = torch.zeros(batch, length)
    rewards[torch.arange(batch), valid - 1] = total
    uids = [str(uuid.UUID(int=i // group + 1)) for i in range(batch)]
    return {
        "rewards": rewards,
        "mask": mask,
        "index": np.array(uids, dtype=object),
        "segment_rewards": {
            "process_score": torch.rand(batch, generator=gen),
            "summary_score": torch.rand(batch, generator=gen),
            "score": total,
            "should_call_but_no_call": (torch.rand(batch, generator=gen) < 0.05).float(),
            "toolpo_correct_ratio": torch.rand(batch, generator=gen),
        },
        "binary": (torch.rand(batch, generator=gen) < 0.5).float(),
    }


def timeit(cases: dict, reps: int) -> dict:
    """Interleaved repetitions (the machine's load drifts); returns name -> list of seconds."""
    for fn in cases.values():
        fn()  # warm-up
    times: dict = {name: [] for name in cases}
    for _ in range(reps):
        for name, fn in cases.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="256 x 1,024, 3 repetitions")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    batch, length, group, reps = (256, 1024, 16, 3) if args.quick else (2048, 8192, 16, args.reps)
    data = make_batch(batch, length, group)
    r, m, idx, seg = data["rewards"], data["mask"], data["index"], data["segment_rewards"]
    scores_kl = r.clone()
    scores_kl[:, :64] += 0.01  # a KL term in the reward: exercises the fold

    cases = {}
    try:
        from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage as verl_grpo

        cases["verl grpo"] = lambda: verl_grpo(r, m, idx)
    except ImportError:
        print("verl not importable: ratios use slca's grpo as the baseline")
    cases["grpo"] = lambda: get_estimator("grpo")(r, m, idx)
    cases["slca_grpo"] = lambda: get_estimator("slca_grpo")(r, m, idx, segment_rewards=seg)
    cases["slca_grpo + KL fold"] = lambda: get_estimator("slca_grpo")(r, m, idx, segment_rewards=seg, token_level_scores=scores_kl)
    cases["toolpo"] = lambda: get_estimator("toolpo")(r, m, idx, segment_rewards=seg)
    from slca.toolcall.segments import split_segments

    cases["toolcall split_segments"] = lambda: split_segments(m)
    est_times = timeit(cases, reps)

    total = seg["score"]
    pair = torch.stack([seg["process_score"], seg["summary_score"]], 1)
    ds_cases = {
        "max_variance m=4": lambda: max_variance(total, idx, 4),
        "max_variance m=8 binary": lambda: max_variance(data["binary"], idx, 8),
        "random m=4": lambda: random_subset(total, idx, 4, seed=0),
        "segment_sum exact m=4": lambda: max_variance_segment_sum(pair, idx, 4),
    }
    ds_times = timeit(ds_cases, max(reps, 5))

    base_name = "verl grpo" if "verl grpo" in est_times else "grpo"
    base = min(est_times[base_name])
    print(f"estimators on {batch} x {length}, groups of {group}; torch threads {torch.get_num_threads()}, cpus {os.cpu_count()}")
    print(f"{'case':28s} {'min ms':>9s} {'median ms':>10s} {'x ' + base_name:>14s}")
    for name, ts in est_times.items():
        print(f"{name:28s} {min(ts) * 1e3:9.1f} {statistics.median(ts) * 1e3:10.1f} {min(ts) / base:14.2f}")
    print(f"down-sampling {batch} rewards in groups of {group}")
    for name, ts in ds_times.items():
        print(f"{name:28s} {min(ts) * 1e3:9.2f} {statistics.median(ts) * 1e3:10.2f}")
    ratio = min(est_times["slca_grpo"]) / base
    ds = min(ds_times["max_variance m=4"]) * 1e3
    print(f"slca_grpo / {base_name} = {ratio:.2f} (target <= 1.5); max_variance = {ds:.2f} ms (target < 5)")


if __name__ == "__main__":
    main()
