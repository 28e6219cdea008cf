"""How long `slca status` takes on a 100-run sweep directory, against `slca config groups` (the CLI's
fixed cost: Python, the parser, the config groups) measured in the same run.

The sweep directory is laid out as a sweep leaves it: 100 run directories with spec.yaml,
provenance.json, job.json and a metrics.jsonl of `--lines` lines each (a long RL run logs thousands),
in every state. With `--launcher slurm` (SLURM_CONF set to a running cluster, e.g. the test cluster
of scripts/slurm_test_cluster.sh) the manifest names SLURM jobs, so the timing includes the one
`squeue` call; `--array ID` names the tasks of a job array already queued (say held:
`sbatch --array=0-99 --hold --wrap 'sleep 60'`), so every run is one the scheduler lists.

    .venv/bin/python benchmarks/status_overhead.py
    SLURM_CONF=/path/slurm.conf .venv/bin/python benchmarks/status_overhead.py --launcher slurm --array 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STATES = ("done", "running", "failed", "cancelled", None)


def build(sweep: Path, runs: int, lines: int, launcher: str, array: str | None) -> None:
    entries = {}
    (sweep / "logs").mkdir(parents=True)
    for i in range(runs):
        key = f"estimator-grpo_run.seed-{i}"
        run_dir = sweep / "runs" / key
        run_dir.mkdir(parents=True)
        (run_dir / "spec.yaml").write_text(f"experiment: embedded_demo\nlauncher:\n  name: {launcher}\nrun:\n  stages:\n  - data\n  - rl\n")
        (run_dir / "data").mkdir()
        (run_dir / "data" / "result.json").write_text("{}")
        log = sweep / "logs" / f"{key}.log"
        log.write_text("starting\n" * 50)
        with open(run_dir / "metrics.jsonl", "w") as handle:
            for step in range(1, lines + 1):
                handle.write(json.dumps({"stage": "rl", "step": step, "time": 1e9 + step, "reward/score_mean": step / lines,
                                         **{f"rollout/m{j}": 0.5 for j in range(30)}}) + "\n")
        state = STATES[i % len(STATES)]
        job_id = f"{array}_{i}" if array else f"{1000 + i}" if launcher == "slurm" else f"local:{100000 + i}"
        if state:
            (run_dir / "job.json").write_text(json.dumps({"state": state, "job_id": job_id, "log": str(log), "attempt": 1, "job_attempt": 1,
                                                          "started": "2026-01-01T00:00:00+00:00", "cancelled_job": job_id, "cancelled": "2026-01-01T01:00:00+00:00",
                                                          "attempts": [{"attempt": 1, "job_id": job_id, "log": str(log), "offset": 0}]}))
        (run_dir / "provenance.json").write_text(json.dumps({"created_utc": "2026-01-01T00:00:00+00:00", "history": [{"argv": ["slca", "sweep"]}]}))
        entries[key] = {"point": {"estimator": "grpo", "run.seed": i}, "run_dir": str(run_dir), "job_id": job_id, "array_index": None, "log": str(log)}
    (sweep / "manifest.json").write_text(json.dumps({"name": "bench", "launcher": launcher, "runs": entries}))


def timed(argv: list[str], cwd: Path, repeat: int) -> float:
    """Median wall seconds of `slca <argv>` as a fresh process."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "slca.cli", *argv], cwd=cwd, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode:
            raise RuntimeError(f"slca {' '.join(argv)} failed: {proc.stderr[-1000:]}")
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--lines", type=int, default=2000, help="metrics.jsonl lines per run")
    ap.add_argument("--launcher", choices=["local", "slurm"], default="local")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--array", help="with --launcher slurm: the runs' jobs are this array job's tasks 0..runs-1")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sweep = root / "runs" / "sweeps" / "bench"
        build(sweep, args.runs, args.lines, args.launcher, args.array)
        base = timed(["config", "groups"], root, args.repeat)
        table = timed(["status", str(sweep)], root, args.repeat)
        as_json = timed(["status", str(sweep), "--json"], root, args.repeat)
        listing = timed(["runs"], root, args.repeat)
        from slca.launch.overview import collect

        start = time.perf_counter()
        views = collect(sweep)
        inproc = time.perf_counter() - start
        states = sorted({v.state for v in views})
    print(f"{args.runs} runs x {args.lines} metrics lines, launcher={args.launcher}, median of {args.repeat}; states seen: {', '.join(states)}")
    print(f"  slca config groups (baseline)  {base:6.2f} s")
    print(f"  slca status SWEEP_DIR          {table:6.2f} s  ({table / base:.2f}x baseline)")
    print(f"  slca status SWEEP_DIR --json   {as_json:6.2f} s  ({as_json / base:.2f}x baseline)")
    print(f"  slca runs                      {listing:6.2f} s  ({listing / base:.2f}x baseline)")
    print(f"  collect() in process           {inproc:6.3f} s  ({inproc / len(views) * 1000:.2f} ms per run)")


if __name__ == "__main__":
    main()
