"""The efficiency methods inside verl on CPU: vanilla (no filter, all n rollouts) against the
pre-rollout filter + max-variance down-sampling (m = n/2, tool + summary variance), both real verl
0.9.1 runs of SLCA-GRPO on the same SFT warm-start, data and number of steps.

Reported per run, from verl's own per-step timing metrics (`timing_s/*`, steps after the first,
which carries worker start-up): the wall split rollout with reward (`gen`: verl's v1 trainer scores
inside the agent loop) / old log-probs / update (`update_actor`) / the rest of the step; rollouts
and tokens (prompt + response, `perf/total_num_tokens`) updated on; the zero-variance group share
before down-sampling; prompts the filter skipped. Ratios are vanilla / efficient, measured in the same invocation. The last lines project
the per-step ratio onto the paper's GPU cost split (update 3-5x the rollout), since on CPU the
split is whatever the tiny model makes it.

Usage: python benchmarks/verl_efficiency.py [--quick] [--steps N] [--work DIR] [overrides...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from _runs import fork_run, slca_run

# 8 prompts, so the filter sees each prompt again within a few steps; verl saves once, at the end.
COMMON = ("experiment=verl_smoke", "data.n_rl=8", "train.rl.epochs=100", "backend.save_freq=1000")
QUICK = ("data.n_sft=48", "train.sft.max_rows=48")  # a shorter warm-up
VARIANTS = {
    "vanilla": ("filter=none", "downsample=none"),
    "efficient": ("filter=pre_rollout", "filter.readmit_every=2", "downsample=max_variance", "downsample.m=2", "downsample.reward=segment_sum"),
}
# verl 0.9.1's v1 trainer scores each rollout inside the agent loop, so the reward is part of `gen`.
PHASES = {"rollout+reward": "timing_s/gen", "old_log_prob": "timing_s/old_log_prob", "update": "timing_s/update_actor"}


def verl_steps(run_dir: Path) -> list[dict]:
    lines = (run_dir / "rl" / "verl_metrics.jsonl").read_text().splitlines()
    return [json.loads(line)["data"] for line in lines if line.strip()]


def rollouts_per_step(run_dir: Path) -> int:
    import yaml

    rl = yaml.safe_load((run_dir / "spec.yaml").read_text())["train"]["rl"]
    return int(rl["prompts_per_step"]) * int(rl["n"])


def summarise(steps: list[dict], generated: int) -> dict[str, float]:
    """Means over the steps after the first (start-up), and sums of what was updated."""
    warm = steps[1:] or steps
    out = {name: statistics.fmean(s.get(key, 0.0) for s in warm) for name, key in PHASES.items()}
    out["step"] = statistics.fmean(s["timing_s/step"] for s in warm)
    out["other"] = out["step"] - sum(out[name] for name in PHASES)
    out["updated_rollouts"] = sum(s.get("slca/downsample/rollouts_kept", generated) for s in steps)
    out["updated_tokens"] = sum(s["perf/total_num_tokens"] for s in steps)  # prompt + response tokens trained on
    # Before down-sampling: slca's buffer reports it on all n rollouts; without it, the trainer's own.
    out["zero_variance"] = statistics.fmean(s.get("slca/downsample/zero_variance_group_frac", s.get("slca/zero_variance_group_frac", 0.0)) for s in steps)
    out["skipped"] = sum(s.get("slca/prefilter/skipped", 0.0) for s in steps)
    out["total"] = sum(s["timing_s/step"] for s in warm)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="4 steps (two passes over the 8 prompts) instead of --steps, and a 48-row SFT warm-up")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("overrides", nargs="*", help="extra slca overrides for every run")
    args = parser.parse_args()
    steps = 4 if args.quick else args.steps
    work = args.work or Path(tempfile.mkdtemp(prefix="slca-verl-efficiency-"))
    work.mkdir(parents=True, exist_ok=True)
    common = [*COMMON, *(QUICK if args.quick else ()), *args.overrides]
    base = work / "sft"
    slca_run(base, *common, "run.stages=[data,sft]", cwd=work)

    results = {}
    for name, overrides in VARIANTS.items():
        run = fork_run(base, work / name)
        slca_run(run, *common, *overrides, "run.stages=[data,sft,rl]", f"train.rl.max_steps={steps}", cwd=work)
        results[name] = summarise(verl_steps(run), rollouts_per_step(run))

    van, eff = results["vanilla"], results["efficient"]
    print(f"\nverl_smoke on CPU, 8 RL prompts x n=4, {steps} verl steps each; per-step means over steps 2..{steps}")
    header = ["run", *PHASES, "other", "step s", "upd rollouts", "upd tokens", "zero-var", "skipped"]
    print("  ".join(f"{h:>12s}" for h in header))
    for name, r in results.items():
        cells = [f"{r[p]:12.2f}" for p in (*PHASES, "other", "step")]
        cells += [f"{r['updated_rollouts']:12.0f}", f"{r['updated_tokens']:12.0f}", f"{r['zero_variance']:12.2f}", f"{r['skipped']:12.0f}"]
        print(f"{name:>12s}  " + "  ".join(cells))
    ratio = {p: van[p] / eff[p] if eff[p] > 0 else float("nan") for p in (*PHASES, "step", "total")}
    print("vanilla / efficient: " + ", ".join(f"{p} {v:.2f}x" for p, v in ratio.items()))
    print(f"updated tokens: efficient {eff['updated_tokens'] / max(1.0, van['updated_tokens']):.2f}x of vanilla")
    dominant = max(("rollout+reward", "update", "other"), key=lambda p: van[p])
    print(f"what dominates a vanilla CPU step: {dominant} ({van[dominant]:.2f} of {van['step']:.2f} s)")
    # On GPUs the update costs 3-5x the rollout; down-sampling m of n scales the update (and old
    # log-probs) by m/n; the filter removes the skipped share of both.
    kept = eff["updated_rollouts"] / max(1.0, van["updated_rollouts"])
    for factor in (3.0, 5.0):
        projected = (1.0 + factor) / (1.0 + factor * kept)
        print(f"projected per-step speed-up at update = {factor:.0f}x rollout, {kept:.2f} of rollouts kept: {projected:.2f}x")
    print(f"runs kept in {work}")


if __name__ == "__main__":
    main()
