"""Does RL improve on SFT, and does SLCA-GRPO beat GRPO? Eval Success and Process after SFT and after
RL, for `grpo` and `slca_grpo`, over several seeds (mean ± std), plus tool rounds per rollout.

Each seed trains one SFT warm-start; both estimators start RL from that same checkpoint (the baseline
of the comparison is measured in the same run). The reference reports that SLCA-GRPO ends with a
higher success and fewer tool turns.

Usage: python benchmarks/embedded_learning.py [--seeds 0 1 2] [--quick] [--work DIR]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _runs import eval_metrics, fork_run, metrics, slca_run

from slca.rewards.metrics import mean_std

ESTIMATORS = ("grpo", "slca_grpo")
METRICS = ("success", "process", "exact", "name_f1", "tool_rounds")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--quick", action="store_true", help="embedded_smoke sizes, one seed")
    parser.add_argument("--work", type=Path, default=None, help="where runs go (default: a temp dir)")
    parser.add_argument("overrides", nargs="*", help="extra slca overrides for every run")
    args = parser.parse_args()
    experiment = "embedded_smoke" if args.quick else "embedded_demo"
    seeds = args.seeds[:1] if args.quick else args.seeds
    work = args.work or Path(tempfile.mkdtemp(prefix="slca-learning-"))
    work.mkdir(parents=True, exist_ok=True)
    common = [f"experiment={experiment}", *args.overrides]

    per: dict[tuple[str, str], list[float]] = {}
    for seed in seeds:
        base = work / f"seed{seed}" / "sft"
        slca_run(base, *common, f"run.seed={seed}", "run.stages=[data,sft]", cwd=work)
        for estimator in ESTIMATORS:
            run = fork_run(base, work / f"seed{seed}" / estimator)
            slca_run(run, *common, f"run.seed={seed}", f"estimator={estimator}", cwd=work)
            report = eval_metrics(run)
            for stage in ("sft", "rl"):
                for name in METRICS:
                    per.setdefault((f"{estimator}/{stage}", name), []).append(report[stage][name])
            train = metrics(run, "rl")
            informative = [m["groups/informative_frac"] for m in train if "groups/informative_frac" in m]
            per.setdefault((f"{estimator}/rl", "informative_frac"), []).append(sum(informative) / max(len(informative), 1))
            print(f"seed {seed} {estimator}: " + ", ".join(f"{k[1]}={v[-1]:.3f}" for k, v in per.items() if k[0] == f"{estimator}/rl"), flush=True)

    print(f"\n{experiment}, seeds {seeds}: eval on the synthetic eval split (mean ± std over seeds)")
    header = f"{'policy':22s}" + "".join(f"{m:>18s}" for m in (*METRICS, "informative_frac"))
    print(header)
    rows = ["grpo/sft"] + [f"{e}/rl" for e in ESTIMATORS]
    for label in rows:
        cells = []
        for name in (*METRICS, "informative_frac"):
            values = per.get((label, name))
            cells.append(f"{mean_std(values, ddof=1).format():>18s}" if values else f"{'':>18s}")
        shown = "sft (shared start)" if label == "grpo/sft" else label
        print(f"{shown:22s}" + "".join(cells))
    for name in ("success", "process"):
        delta = [b - a for a, b in zip(per[("slca_grpo/rl", name)], per[("grpo/rl", name)])]
        print(f"grpo - slca_grpo {name}: {mean_std(delta, ddof=1).format()}")
    print(f"runs kept in {work}")


if __name__ == "__main__":
    main()
