"""SLCA-GRPO against GRPO where one scalar reward per rollout misattributes credit
(docs/method.md#the-credit-assignment-task).

On `experiment=credit_assignment` the SFT teacher is biased in both segments, independently: a
redundant call (the calls' habit) and an answer citing no tool result (the answer's habit). Per seed,
one SFT warm start; from it, with the same budget, RL with `grpo`, `slca_grpo` and `slca_grpo` with
`estimator.final_tool_turn=process`; greedy eval of the SFT policy and of each RL policy on the
held-out split. The baseline (`grpo`, and the SFT start) is measured in the same run.

Prints, per arm and mean over seeds, the per-segment learning curves in step windows (process score,
summary score, redundant-call rate, uncited-answer rate, misattributed token fraction), then the
per-seed greedy Success table with mean ± std and the per-seed difference to `grpo`. Writes
WORK/summary.json, WORK/curves.png (the five curves, mean over seeds) and each seed's HTML report
(WORK/seed<S>/arms/report, one line per arm).

The trainer logs means only; the two habit rates need each rollout's record, so each RL run goes
through this process with `LocalRlTrainer._rollout_metrics` wrapped to add them (the two `task/*`
metrics in metrics.jsonl). Seeds run as separate processes, `--jobs` at a time, one thread each.

Usage: python benchmarks/credit_assignment.py [--seeds 0 1 2] [--jobs 2] [--work DIR] [overrides...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _runs import eval_metrics, fork_run, metrics

from slca.fileio import atomic_write_text
from slca.rewards.metrics import mean_std

ARMS = {  # label -> estimator overrides
    "grpo": ("estimator=grpo",),
    "slca_grpo": ("estimator=slca_grpo",),
    "slca_grpo_process": ("estimator=slca_grpo", "estimator.final_tool_turn=process"),
}
REDUNDANT, UNCITED = "task/redundant_call_rate", "task/uncited_answer_rate"
CURVES = {  # label -> metrics.jsonl key
    "process": "reward/process_mean",
    "summary": "reward/summary_mean",
    "redundant calls": REDUNDANT,
    "uncited answers": UNCITED,
    "misattributed tokens": "credit/misattributed_token_frac",
}
EVAL = ("success", "process", "name_f1", "tool_rounds")
WINDOW = 4  # steps per printed window of the curves


def habit_rates(records: Sequence[Any]) -> dict[str, float]:
    """The two habits' shares among one step's rollouts, from their reward records: redundant calls =
    rollouts that made more calls than the gold needs, among those whose gold needs one; uncited answers
    = rollouts that got tool results and answered with a summary score of 0, among those that got tool
    results and answered (a cut-off or call-ended rollout has no answer to judge)."""
    needed = [r for r in records if r.components.get("gold_tool_count", 0) > 0]
    redundant = sum(r.components.get("pred_tool_count", 0) > r.components["gold_tool_count"] for r in needed)
    answered = [r for r in records if not r.components.get("no_tool_response", 1) and not r.last_turn_is_tool_call]
    uncited = sum(r.summary == 0.0 for r in answered)
    return {REDUNDANT: redundant / len(needed) if needed else math.nan, UNCITED: uncited / len(answered) if answered else math.nan}


def _in_process_run(run_dir: Path, overrides: Sequence[str]) -> None:
    """`slca run` in this process, with the habit rates added to every RL step's metrics."""
    import slca.backends.local.rl as local_rl
    from slca.config.compose import compose_spec
    from slca.pipeline import prepare_run_dir, run_pipeline
    from slca.tracking.tracker import Tracker

    trainer = local_rl.LocalRlTrainer
    if not getattr(trainer._rollout_metrics, "adds_habit_rates", False):
        logged = trainer._rollout_metrics

        def with_habits(self: Any, generated: Any, rewards: Any) -> dict[str, Any]:
            return {**logged(self, generated, rewards), **habit_rates(generated.records)}

        with_habits.adds_habit_rates = True  # type: ignore[attr-defined]
        trainer._rollout_metrics = with_habits  # type: ignore[method-assign]
    spec, run_dir = prepare_run_dir(compose_spec(["experiment=credit_assignment", f"run.dir={run_dir}", "logger=none", *overrides]))
    with Tracker(run_dir) as tracker:
        outcomes = run_pipeline(spec, run_dir, tracker, echo=lambda _: None)
    failed = [o for o in outcomes if o.status not in ("done", "skipped")]
    if failed:
        raise RuntimeError(f"{run_dir}: {failed}")


def _curve(rows: list[dict[str, Any]], key: str) -> list[float]:
    return [float(r[key]) if r.get(key) is not None else math.nan for r in rows]


def worker(seed: int, work: Path, overrides: Sequence[str]) -> None:
    """One seed: SFT, then each arm's RL and eval from it; WORK/seed<S>/result.json."""
    root = work / f"seed{seed}"
    os.chdir(work)  # the runs' relative caches (backbone, data) go under WORK, not where this was started
    common = [f"run.seed={seed}", f"data.cache_dir={work / 'cache'}", *overrides]
    t0 = time.perf_counter()
    _in_process_run(root / "sft", [*common, "run.stages=[data,sft]"])  # a finished SFT is skipped, a broken one resumed
    result: dict[str, Any] = {"seed": seed, "sft_s": time.perf_counter() - t0, "arms": {}}
    for arm, chosen in ARMS.items():
        t1 = time.perf_counter()
        run = fork_run(root / "sft", root / "arms" / arm)
        _in_process_run(run, [*common, *chosen])
        rows = metrics(run, "rl")
        report = eval_metrics(run)
        result["arms"][arm] = {
            "curves": {label: _curve(rows, key) for label, key in CURVES.items()},
            "eval": {stage: {m: report[stage][m] for m in EVAL} for stage in ("sft", "rl")},
            "seconds": time.perf_counter() - t1,
        }
        print(f"seed {seed} {arm}: greedy Success {report['sft']['success']:.3f} -> {report['rl']['success']:.3f} "
              f"({result['arms'][arm]['seconds']:.0f} s)", flush=True)
    atomic_write_text(root / "result.json", json.dumps(result, indent=1) + "\n")
    subprocess.run([sys.executable, "-m", "slca.cli", "report", str(root / "arms")], check=True, capture_output=True)


def _nanmean(xs: Sequence[float]) -> float:
    kept = [x for x in xs if not math.isnan(x)]
    return sum(kept) / len(kept) if kept else math.nan


def summarise(results: list[dict[str, Any]], work: Path) -> dict[str, Any]:
    """Print the curves and the Success table; the same numbers as a dict."""
    seeds = [r["seed"] for r in results]
    steps = len(results[0]["arms"]["grpo"]["curves"]["process"])
    mean_curves = {arm: {label: [_nanmean([r["arms"][arm]["curves"][label][s] for r in results]) for s in range(steps)]
                         for label in CURVES} for arm in ARMS}
    print(f"\ncredit_assignment, seeds {seeds}: sampled per-step curves, mean over seeds, steps in windows of {WINDOW}")
    windows = [(a, min(a + WINDOW, steps)) for a in range(0, steps, WINDOW)]
    print(f"{'curve':22s}{'arm':20s}" + "".join(f"{f'{a + 1}-{b}':>8s}" for a, b in windows))
    for label in CURVES:
        for arm in ARMS:
            ys = mean_curves[arm][label]
            print(f"{label:22s}{arm:20s}" + "".join(f"{_nanmean(ys[a:b]):8.3f}" for a, b in windows))
    print(f"\ngreedy eval Success on the held-out split ({', '.join(EVAL[1:])} after RL, mean ± std over seeds, below)")
    print(f"{'seed':>6s}{'SFT':>10s}" + "".join(f"{arm:>20s}" for arm in ARMS))
    for r in results:
        print(f"{r['seed']:>6d}{r['arms']['grpo']['eval']['sft']['success']:10.3f}"
              + "".join(f"{r['arms'][arm]['eval']['rl']['success']:20.3f}" for arm in ARMS))
    table: dict[str, dict[str, str]] = {"sft": {m: mean_std([r["arms"]["grpo"]["eval"]["sft"][m] for r in results], ddof=1).format() for m in EVAL}}
    for arm in ARMS:
        table[arm] = {m: mean_std([r["arms"][arm]["eval"]["rl"][m] for r in results], ddof=1).format() for m in EVAL}
    for label, row in table.items():
        print(f"{label:20s}" + "".join(f"{m} {v:>16s}  " for m, v in row.items()))
    deltas = {}
    for arm in ARMS:
        if arm != "grpo":
            d = [r["arms"][arm]["eval"]["rl"]["success"] - r["arms"]["grpo"]["eval"]["rl"]["success"] for r in results]
            deltas[arm] = mean_std(d, ddof=1).format()
            print(f"{arm} - grpo greedy Success, per seed: {deltas[arm]}")
    return {"seeds": seeds, "mean_curves": mean_curves, "eval": table, "success_minus_grpo": deltas, "per_seed": results}


def plot(mean_curves: dict[str, dict[str, list[float]]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(CURVES), figsize=(4 * len(CURVES), 3.2))
    for ax, label in zip(axes, CURVES):
        for arm in ARMS:
            ys = mean_curves[arm][label]
            ax.plot(range(1, len(ys) + 1), ys, label=arm, marker=".")
        ax.set_title(label)
        ax.set_xlabel("RL step")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--jobs", type=int, default=2, help="seeds run at once (one thread each)")
    parser.add_argument("--work", type=Path, default=None, help="where runs go (default: a temp dir); a rerun resumes")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("overrides", nargs="*", help="extra slca overrides for every run")
    args = parser.parse_args()
    work = (args.work or Path(tempfile.mkdtemp(prefix="slca-credit-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    if args.worker is not None:
        worker(args.worker, work, args.overrides)
        return

    start = time.perf_counter()
    pending, running = list(args.seeds), []
    while pending or running:
        while pending and len(running) < max(1, args.jobs):
            seed = pending.pop(0)
            cmd = [sys.executable, __file__, "--worker", str(seed), "--work", str(work), *args.overrides]
            running.append((seed, subprocess.Popen(cmd)))
        seed, proc = running.pop(0)
        if proc.wait() != 0:
            raise SystemExit(f"seed {seed} failed ({proc.returncode}); its runs are in {work / f'seed{seed}'}")
    results = [json.loads((work / f"seed{s}" / "result.json").read_text()) for s in args.seeds]
    summary = summarise(results, work)
    atomic_write_text(work / "summary.json", json.dumps(summary, indent=1) + "\n")
    plot(summary["mean_curves"], work / "curves.png")
    print(f"\n{len(args.seeds)} seeds in {time.perf_counter() - start:.0f} s wall; runs, reports and curves.png in {work}")


if __name__ == "__main__":
    main()
