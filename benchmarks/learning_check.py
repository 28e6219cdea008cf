"""The seed spread behind the learning regression check's margin (docs/method.md#learning-regression-check).

Runs `slca run experiment=learning_check` for each seed and prints the lift of the sampled reward
(`reward/norm_mean`, mean of steps 16-20 minus mean of steps 1-3, the window the test uses) per
seed, its mean ± std, its minimum and mean - 3 std: the lift bound in tests/learning (MIN_LIFT) must
sit below the spread of healthy runs, about mean - 3 std, and can hold only where that is above 0
(extra overrides, e.g. `train.rl.temperature=1.0 train.rl.n=4`, measure other configs). The
sign-flipped twin and the misattribution beside GRPO are measured by the test itself (it swaps the
estimator in-process).

Usage: python benchmarks/learning_check.py [--seeds 0 1 2] [--work DIR] [overrides...]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _runs import metrics, slca_run

from slca.report.series import metric_series, window_lift
from slca.rewards.metrics import mean_std

HEAD, TAIL = 3, 5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--work", type=Path, default=None, help="where runs go (default: a temp dir)")
    parser.add_argument("overrides", nargs="*", help="extra slca overrides for every run")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="slca-learning-check-"))
    work.mkdir(parents=True, exist_ok=True)

    lifts = []
    for seed in args.seeds:
        run = work / f"seed{seed}"
        seconds = slca_run(run, "experiment=learning_check", f"run.seed={seed}", *args.overrides, cwd=work)
        series = metric_series(metrics(run, "rl"), "reward/norm_mean")
        if series is None:
            raise SystemExit(f"{run}: no reward/norm_mean logged")
        lifts.append(window_lift(series, head=HEAD, tail=TAIL))
        start = sum(series.y[:HEAD]) / HEAD
        print(f"seed {seed}: norm_mean {start:.3f} -> {start + lifts[-1]:.3f}, lift {lifts[-1]:+.3f} ({seconds:.0f} s)", flush=True)

    spread = mean_std(lifts)
    mean, std = spread.mean, spread.std
    print(f"\nlearning_check, seeds {args.seeds}: lift {mean:+.3f} ± {std:.3f}, min {min(lifts):+.3f}, mean - 3 std {mean - 3 * std:+.3f}")


if __name__ == "__main__":
    main()
