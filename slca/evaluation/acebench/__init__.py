"""ACEBench benchmark (English normal and special categories): the vendored data, slca's own reader
and checker with ACEBench's rules, and the runner (`eval.benchmark=acebench`). See docs/eval.md#table-3-acebench.
"""

from __future__ import annotations

from slca.evaluation.acebench.data import AceBenchDataError, Entry, load_category
from slca.evaluation.acebench.decode import decode
from slca.evaluation.acebench.score import check
from slca.evaluation.acebench.run import AceBenchBenchmark  # registers "acebench" in slca.evaluation.benchmarks.BENCHMARKS

__all__ = ["AceBenchBenchmark", "AceBenchDataError", "Entry", "check", "decode", "load_category"]
