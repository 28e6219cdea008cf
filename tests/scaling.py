"""Complexity checks without wall-clock budgets.

A test that an algorithm stays linear on hostile input times the same work at two sizes in the
process's own CPU time (other processes on a loaded machine do not count against it) and compares
the growth with the growth of the input: k times the input costs about k times the CPU for a linear
algorithm and k² (or k³) times for the backtracking regexes these tests were written against. A
test that work is vectorised compares it with a baseline operation timed in the same run.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# Linear work grows ~k-fold; the bound leaves room for cache effects and timer noise and stays far
# below the k²-fold growth of a quadratic algorithm.
SLACK = 3.0


def cpu_seconds(work: Callable[[], object], repeat: int = 3) -> float:
    """The least CPU time of `repeat` runs of `work` (the least is the one least disturbed)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def assert_linear(run: Callable[[int], object], n: int, k: int = 8) -> None:
    """`run(size)` at size n and k·n grows by less than SLACK·k (quadratic would be k²)."""
    small = max(cpu_seconds(lambda: run(n)), 1e-4)  # below the timer's useful resolution
    large = cpu_seconds(lambda: run(k * n), repeat=2)
    growth = large / small
    assert growth < SLACK * k, f"{k}x the input took {growth:.1f}x the CPU time (linear ~{k}x, quadratic ~{k * k}x)"


def assert_within(work: Callable[[], object], baseline: Callable[[], object], times: float) -> None:
    """`work` costs under `times` the CPU time of `baseline`, both timed in this run."""
    ratio = cpu_seconds(work) / max(cpu_seconds(baseline), 1e-4)
    assert ratio < times, f"{ratio:.1f}x the baseline's CPU time (bound {times}x)"
