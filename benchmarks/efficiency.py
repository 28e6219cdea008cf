"""RL efficiency on the embedded task: vanilla GRPO against GRPO + pre-rollout filter (k = 1) +
max-variance down-sampling (m = n/2), on the same SFT warm-start and the same number of steps.

Both runs evaluate every `--eval-every` steps. Reported: each run's training wall time (evaluations
excluded), generated (rollout) and updated tokens, the final eval reward, and the efficient run's
wall time to first reach the vanilla run's final eval reward: the speed-up is their ratio
(efficiency paper: 1.7x single-turn, 2.6x multi-turn on GPUs).

Usage: python benchmarks/efficiency.py [--quick] [--steps N] [--metric process] [--work DIR]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _runs import fork_run, metrics, slca_run

VARIANTS = {
    "vanilla": ("estimator=grpo", "filter=none", "downsample=none"),
    "efficient": ("estimator=grpo", "filter=pre_rollout", "downsample=max_variance"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="embedded_smoke sizes")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--eval-every", type=int, default=5)
    parser.add_argument("--metric", default="process", help="eval metric compared (process, success, exact, name_f1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("overrides", nargs="*", help="extra slca overrides for every run")
    args = parser.parse_args()
    experiment = "embedded_smoke" if args.quick else "embedded_demo"
    steps = 4 if args.quick else args.steps
    every = 2 if args.quick else args.eval_every
    work = args.work or Path(tempfile.mkdtemp(prefix="slca-efficiency-"))
    work.mkdir(parents=True, exist_ok=True)
    common = [f"experiment={experiment}", f"run.seed={args.seed}", *args.overrides]
    base = work / "sft"
    slca_run(base, *common, "run.stages=[data,sft]", cwd=work)

    curves, totals = {}, {}
    for name, overrides in VARIANTS.items():
        run = fork_run(base, work / name)
        slca_run(run, *common, *overrides, "run.stages=[data,sft,rl]", f"train.rl.max_steps={steps}",
                 f"train.rl.eval_every_steps={every}", cwd=work)
        curves[name] = [(m["train_s"], m[f"eval/{args.metric}"]) for m in metrics(run, "rl_eval")]
        train = metrics(run, "rl")
        totals[name] = {
            "train_s": curves[name][-1][0],
            "generated_tokens": int(sum(m.get("rollout/generated_tokens", 0) for m in train)),
            "updated_rollouts": int(sum(m.get("rollouts_kept", 0) for m in train)),
            "final": curves[name][-1][1],
            "best": max(v for _, v in curves[name]),
        }

    target = totals["vanilla"]["final"]
    reach = next((t for t, v in curves["efficient"] if v >= target - 1e-9), None)
    print(f"\n{experiment}, {steps} RL steps, eval every {every}, metric eval/{args.metric}, seed {args.seed}")
    print(f"{'run':10s} {'train s':>9s} {'gen tokens':>11s} {'upd rollouts':>13s} {'final':>7s} {'best':>7s}")
    for name, t in totals.items():
        print(f"{name:10s} {t['train_s']:9.1f} {t['generated_tokens']:11d} {t['updated_rollouts']:13d} {t['final']:7.3f} {t['best']:7.3f}")
    for name, curve in curves.items():
        print(f"curve {name}: " + "  ".join(f"{t:.0f}s:{v:.3f}" for t, v in curve))
    if reach is None:
        print(f"efficient run never reached vanilla's final eval/{args.metric} = {target:.3f}")
    else:
        ratio = totals["vanilla"]["train_s"] / reach if reach > 0 else float("inf")
        print(f"time to reach vanilla's final {args.metric} {target:.3f}: vanilla {totals['vanilla']['train_s']:.1f}s, "
              f"efficient {reach:.1f}s -> speed-up {ratio:.2f}x")
    print(f"per-step cost ratio (vanilla / efficient train s): {totals['vanilla']['train_s'] / totals['efficient']['train_s']:.2f}x")
    print(f"runs kept in {work}")


if __name__ == "__main__":
    main()
