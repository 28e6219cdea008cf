"""BFCL single-turn benchmark: BFCL's shipped data and gold answers, slca's own parser and checker.

`check(functions, model_output, possible_answer, category) -> (valid, error_kind)` scores one raw
model output; `load_category` reads a category from the installed `bfcl-eval` package; the
runner (slca.evaluation.bfcl.run) rolls a policy out on them. See docs/bfcl.md. The multi-turn
categories live in slca.evaluation.bfcl.multi_turn (`eval.benchmark=bfcl_multi_turn`, imported lazily).
"""

from __future__ import annotations

from slca.evaluation.bfcl.data import CATEGORIES, BfclDataError, Category, Entry, data_dir, load_category, to_tool
from slca.evaluation.bfcl.decode import decode
from slca.evaluation.bfcl.score import check
from slca.evaluation.bfcl.run import BfclBenchmark  # registers "bfcl" in slca.evaluation.benchmarks.BENCHMARKS

__all__ = [
    "CATEGORIES", "BfclBenchmark", "BfclDataError", "Category", "Entry", "check", "data_dir", "decode", "load_category",
    "to_tool",
]
