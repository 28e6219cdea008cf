"""Wall time of `slca --help` and `slca run --cfg job` against bare `python -c pass`, measured in the same run.

Targets on a 2-core machine: --help at most 0.3 s over bare Python; --cfg job at most 2 s over it.
Usage: python benchmarks/cli_latency.py [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c pass (baseline)": [sys.executable, "-c", "pass"],
    "slca --help": [sys.executable, "-m", "slca.cli", "--help"],
    "slca run --cfg job": [sys.executable, "-m", "slca.cli", "run", "--cfg", "job"],
    "slca run --cfg job experiment=paper_slca": [sys.executable, "-m", "slca.cli", "run", "--cfg", "job", "experiment=paper_slca"],
}
TARGETS = {"slca --help": 0.3, "slca run --cfg job": 2.0, "slca run --cfg job experiment=paper_slca": 2.0}


def median_seconds(cmd: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 repeats")
    args = parser.parse_args()
    repeats = 3 if args.quick else args.repeats
    for cmd in COMMANDS.values():  # warm the page cache once
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    results = {name: median_seconds(cmd, repeats) for name, cmd in COMMANDS.items()}
    base = results["python -c pass (baseline)"]
    print(f"{'command':45s} {'median s':>9s} {'over baseline':>14s} {'target':>8s}")
    for name, seconds in results.items():
        target = TARGETS.get(name)
        verdict = "" if target is None else ("ok" if seconds - base <= target else "MISSED")
        target_text = "" if target is None else f"{target:.1f}"
        print(f"{name:45s} {seconds:9.3f} {seconds - base:+14.3f} {target_text:>8s} {verdict}")


if __name__ == "__main__":
    main()
