"""`acebench` benchmark: ACEBench's English normal and special categories rolled out by slca's loop
(docs/eval.md#table-3-acebench).

Every category of slca.config.benchmarks.ACEBENCH_CATEGORIES is evaluated, or those
`eval.bfcl_categories` names (`eval.limit` caps the entries taken from each). Each entry becomes a
row carrying ACEBench's own system and user turns (the `acebench_default` and `dataset` prompts
keep them; the other prompts of the grid replace the system turn); one assistant turn is sampled
and scored with slca.evaluation.acebench.check. Metrics per seed: `summary` (ACEBench's Summary
weights over normal and special, renormalised: the agent group is not run), `normal` and
`special` (unweighted means of their categories), each category's accuracy, and `parseable`, the
fraction of normal outputs read as a call list.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

from slca.config.benchmarks import ACEBENCH_CATEGORIES
from slca.evaluation.acebench.data import DATA_DIR, NORMAL, AceBenchDataError, Entry, category_files, load_category
from slca.evaluation.acebench.decode import decode
from slca.evaluation.acebench.score import category_accuracy, check, summary
from slca.evaluation.benchmarks import BENCHMARKS, BenchmarkDataError, BenchmarkInputs, DataRef, Scoring
from slca.evaluation.harness import CellResult, evaluate_grid, nan_mean

HEADLINE = ("summary", "normal", "special", *ACEBENCH_CATEGORIES, "parseable")


def selected(cfg: Any) -> tuple[str, ...]:
    """The categories `eval.bfcl_categories` names, in ACEBench's order (all when null)."""
    return tuple(c for c in ACEBENCH_CATEGORIES if cfg.bfcl_categories is None or c in cfg.bfcl_categories)


def load_entries(limit: int | None, categories: tuple[str, ...] = ACEBENCH_CATEGORIES) -> list[Entry]:
    """The first `limit` entries (all when None) of each category, category by category."""
    return [e for name in categories for e in load_category(name, limit=limit)]


def score_outputs(entries: list[Entry], outputs: list[tuple[int, str]]) -> dict[str, float]:
    """The metrics of one seed from (entry index, model text) pairs."""
    verdicts: dict[int, list[bool]] = {}
    readable = []
    for index, text in outputs:
        ok, _ = check(entries[index], text)
        verdicts.setdefault(index, []).append(ok)
        if entries[index].category in NORMAL:
            decoded = decode(text)
            readable.append(float(decoded.ok and bool(decoded.calls)))
    accuracy = category_accuracy(entries, verdicts)
    return {**summary(accuracy), **accuracy, "parseable": nan_mean(readable)}


class AceBenchBenchmark:
    """The `acebench` entry of slca.evaluation.benchmarks.BENCHMARKS (its protocol in that module's docstring)."""

    headline = HEADLINE

    def data(self, inputs: BenchmarkInputs) -> DataRef:
        digest = hashlib.sha256()
        total = evaluated = 0
        try:
            for name in selected(inputs.eval_cfg):
                for path in category_files(name):
                    digest.update(path.relative_to(DATA_DIR).as_posix().encode() + b"\0" + path.read_bytes())
                n = len(load_category(name))
                total += n
                evaluated += min(n, inputs.eval_cfg.limit) if inputs.eval_cfg.limit else n
        except AceBenchDataError as exc:
            raise BenchmarkDataError(f"eval.benchmark=acebench: {exc}") from None
        except OSError as exc:
            raise BenchmarkDataError(f"eval.benchmark=acebench: {exc.filename}: cannot read: {exc.strerror}") from None
        return DataRef(str(DATA_DIR), digest.hexdigest(), total, evaluated)

    def scoring(self, inputs: BenchmarkInputs) -> Scoring:
        return Scoring("acebench", "acebench_checker (slca's own, ACEBench's rules)", None,
                       "none: single-turn calls are checked, not run (agent categories not run)")

    def evaluate(self, generator: Any, inputs: BenchmarkInputs) -> list[CellResult]:
        try:
            entries = load_entries(inputs.eval_cfg.limit, selected(inputs.eval_cfg))
        except AceBenchDataError as exc:
            raise BenchmarkDataError(f"eval.benchmark=acebench: {exc}") from None
        rows = [e.row() for e in entries]
        # One answer per entry, scored as written: no tool round follows it.
        cfg = dataclasses.replace(inputs.rollout_cfg, max_tool_rounds=0)
        return evaluate_grid(rows, generator=generator, simulator=None, rollout_cfg=cfg, inputs=inputs, label="acebench",
                             score=lambda batch: score_outputs(entries, [(t.row_index, t.solution_text) for t in batch]))


BENCHMARKS.register("acebench")(AceBenchBenchmark())
