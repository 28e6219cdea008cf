"""Curation (offline prompt selection): prompts per second on CPU with the tiny backbone, and the share of the
synthetic RL prompts each --keep mode keeps after embedded SFT (docs/method.md#offline-prompt-curation).

1. SFT warm-start: `slca run run.stages=[data,sft]` (embedded_demo; --quick: embedded_smoke).
2. `slca data curate` on the first --prompts RL prompts with that run's SFT checkpoint, k rollouts
   each, --keep mixed, batched (--batch-prompts); the baseline measured in the same run curates
   the first quarter of them one prompt per batch.
3. The other keep modes decide on the cached outcomes (no generator call): their shares come free.

Usage: python benchmarks/curate.py [--quick] [--prompts N] [--rollouts K] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _runs import slca_run

MODES = ("mixed", "not_all_correct", "not_all_wrong")


def curate_once(work: Path, source: Path, run: Path, out: str, overrides: list[str], *flags: str) -> tuple[dict, float]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "slca.cli", "data", "curate", str(source), *overrides,
                           "--policy", str(run), "--out", str(work / out), "--cache", str(work / "cache"), "--no-progress",
                           "--json", *flags], cwd=work, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"slca data curate failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="embedded_smoke SFT, 32 prompts")
    parser.add_argument("--prompts", type=int, default=None, help="RL prompts curated (default 200; --quick 32)")
    parser.add_argument("--rollouts", type=int, default=4, help="rollouts per prompt (k)")
    parser.add_argument("--batch-prompts", type=int, default=16)
    parser.add_argument("--work", type=Path, default=None, help="where runs go (default: a temp dir)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of curation (backend.num_threads)")
    args = parser.parse_args()
    import pyarrow.parquet as pq

    experiment = "embedded_smoke" if args.quick else "embedded_demo"
    n_prompts = args.prompts or (32 if args.quick else 200)
    work = args.work or Path(tempfile.mkdtemp(prefix="slca-curate-"))
    work.mkdir(parents=True, exist_ok=True)
    run = work / "sft"
    sft_s = slca_run(run, f"experiment={experiment}", "run.stages=[data,sft]", cwd=work)
    data = json.loads((run / "data" / "result.json").read_text())
    rl = Path(data["rl"]) if Path(data["rl"]).is_absolute() else run / data["rl"]
    table = pq.read_table(rl)
    source, baseline_source = work / "prompts.parquet", work / "baseline.parquet"
    pq.write_table(table.slice(0, n_prompts), source)
    pq.write_table(table.slice(0, max(1, n_prompts // 4)), baseline_source)
    k = ["--rollouts", str(args.rollouts)]
    # The SFT run's experiment: the same rollout, simulator and reward settings as its training.
    overrides = [f"experiment={experiment}", "logger=none", f"backend.num_threads={args.threads}"]

    base, base_s = curate_once(work, baseline_source, run, "out-baseline", overrides, *k, "--keep", "mixed", "--batch-prompts", "1",
                               "--cache", str(work / "cache-baseline"))
    funnels = {}
    walls = {}
    for mode in MODES:
        funnels[mode], walls[mode] = curate_once(work, source, run, f"out-{mode}", overrides, *k, "--keep", mode, "--batch-prompts", str(args.batch_prompts))
    first = funnels["mixed"]
    rate = first["rolled_out"] / first["seconds"]
    base_rate = base["rolled_out"] / base["seconds"]
    print(f"\n{experiment}: SFT {sft_s:.0f} s; {first['rows_in']} synthetic RL prompts, k={args.rollouts}, "
          "policy = the SFT checkpoint (HierR success, the training reward)")
    print(f"rollout throughput: {rate:.2f} prompts/s ({rate * args.rollouts:.1f} rollouts/s) with {args.batch_prompts} prompts per batch, "
          f"{args.threads} torch thread(s); "
          f"baseline 1 prompt per batch {base_rate:.2f} prompts/s -> {rate / base_rate:.2f}x")
    print(f"cached reruns (other keep modes): {walls['not_all_correct']:.1f} s and {walls['not_all_wrong']:.1f} s wall, "
          f"generator calls {funnels['not_all_correct']['generator_calls']} and {funnels['not_all_wrong']['generator_calls']} "
          f"(first pass {walls['mixed']:.1f} s wall, {first['generator_calls']} generator calls)")
    print("pass-rate histogram (successes/k: prompts): " + ", ".join(f"{b}: {n}" for b, n in first["histogram"].items()))
    print(f"{'keep mode':18s}{'kept':>8s}{'share':>9s}  dropped")
    for mode in MODES:
        f = funnels[mode]
        dropped = ", ".join(f"{r} {n}" for r, n in f["dropped"].items() if n)
        print(f"{mode:18s}{f['kept']:>8d}{f['kept'] / f['rows_in']:>9.1%}  {dropped or '-'}")


if __name__ == "__main__":
    main()
