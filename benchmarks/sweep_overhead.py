"""Overhead of launching a 4-run sweep on the SLURM test cluster vs the same 4 runs on this machine.

Baseline measured in the same run: `slca run -m ...` with launcher=local (subprocesses, one after
another). Then the same grid with launcher=slurm on a fresh one-node test cluster
(scripts/slurm_test_cluster.sh, needs root), two jobs at once (the node has 2 CPUs), timed from
submission to the moment `slca results` can tabulate all four. Also reported: the cluster's start.

    .venv/bin/python benchmarks/sweep_overhead.py            # 4 toy runs (estimator x seed)
    .venv/bin/python benchmarks/sweep_overhead.py --quick    # the same, RL cut to 1 step
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOY = ["experiment=embedded_smoke", "data.n_sft=40", "data.n_rl=16", "data.n_eval=4", "train.sft.max_rows=40", "train.sft.batch_size=8",
       "train.sft.micro_batch_size=4", "train.rl.prompts_per_step=2", "train.rl.mini_batch_prompts=2", "train.rl.n=2",
       "train.rl.max_response_length=48", "eval.limit=2", "logger=none"]
GRID = ["estimator=grpo,slca_grpo", "run.seed=0,1"]


def _slca(*args: str, cwd: Path, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "slca.cli", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"slca {' '.join(args[:2])} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    steps = 1 if ap.parse_args().quick else 3
    with tempfile.TemporaryDirectory(prefix="slca-sweep-bench-") as tmp:
        work = Path(tmp)
        common = [*TOY, f"train.rl.max_steps={steps}", f"data.cache_dir={work / 'cache'}", f"backbone.cache_dir={work / 'backbones'}"]
        _slca("run", *common, "run.stages=[data]", f"run.dir={work / 'warm'}", cwd=work)  # the caches, built once for both
        local_s = _slca("run", "-m", *common, *GRID, f"run.dir={work / 'local'}", cwd=work)

        state = work / "cluster"
        start = time.perf_counter()
        up = subprocess.run(["bash", str(REPO / "scripts" / "slurm_test_cluster.sh"), "start", str(state)], capture_output=True, text=True)
        cluster_s = time.perf_counter() - start
        if up.returncode != 0:
            raise RuntimeError(f"the test cluster did not start: {up.stderr}")
        env = {**os.environ, "SLURM_CONF": str(state / "slurm.conf")}
        try:
            slurm = ["launcher=slurm", "launcher.cpus_per_task=1", "launcher.gpus_per_node=0", "launcher.time_min=60"]
            slurm_s = _slca("run", "-m", "--wait", *common, *slurm, *GRID, f"run.dir={work / 'slurm'}", cwd=work, env=env)
            results_s = _slca("results", str(work / "slurm"), cwd=work, env=env)
        finally:
            subprocess.run(["bash", str(REPO / "scripts" / "slurm_test_cluster.sh"), "stop", str(state)], capture_output=True, text=True)
    print(f"4 runs, local sweep (one after another):        {local_s:7.1f} s  (baseline)")
    print(f"4 runs, SLURM test cluster (2 at once), to done: {slurm_s:7.1f} s  ({slurm_s / local_s:.2f}x the local sweep)")
    print(f"slca results over the SLURM sweep:               {results_s:7.1f} s")
    print(f"test cluster start (munged, slurmctld, slurmd):  {cluster_s:7.1f} s")


if __name__ == "__main__":
    main()
