"""Independent reference implementations the algorithm tests compare against."""

from __future__ import annotations


def reference_runs(row: list[float]) -> list[tuple[int, int]]:
    """Runs of a 0/1 mask row as [start, end) pairs, by scanning for 0->1 and 1->0 edges."""
    runs, start = [], None
    for i, v in enumerate([*row, 0.0]):
        if v > 0.5 and start is None:
            start = i
        elif v <= 0.5 and start is not None:
            runs.append((start, i))
            start = None
    return runs
