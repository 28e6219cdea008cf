"""`bfcl` benchmark: BFCL's single-turn categories rolled out by slca's loop (docs/bfcl.md#running-it).

Every category of slca.evaluation.bfcl.data.CATEGORIES is evaluated, or those `eval.categories`
names (`eval.limit` caps the entries taken from each). Each entry becomes a row whose prompt is built by the protocol cell
like any other benchmark's (system prompt, template construction, thinking); one assistant turn
is sampled (no tool round: BFCL single-turn scores the first answer) and scored with
slca.evaluation.bfcl.check. Per seed, each category's accuracy is the fraction of valid outputs;
`accuracy` is their unweighted mean; `parseable` the fraction of outputs read as at least one
well-formed call, over the entries that want a call (all but the irrelevance ones).
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

from slca.evaluation.benchmarks import BENCHMARKS, BenchmarkDataError, BenchmarkInputs, DataRef, Scoring
from slca.evaluation.bfcl.data import CATEGORIES, FILE_PREFIX, ORDER, BfclDataError, Entry, data_dir, load_category
from slca.evaluation.bfcl.decode import decode
from slca.evaluation.bfcl.score import check_decoded
from slca.evaluation.harness import CellResult, evaluate_grid, nan_mean

HEADLINE = ("accuracy", *ORDER, "parseable")
CALL_WANTED = ("single", "parallel", "relevance")  # checker rules of the categories that want a call


def selected(cfg: Any) -> tuple[str, ...]:
    """The categories `eval.categories` names, in BFCL's order (all when null)."""
    return tuple(c for c in ORDER if cfg.categories is None or c in cfg.categories)


def load_entries(limit: int | None, categories: tuple[str, ...] = ORDER) -> list[Entry]:
    """The first `limit` entries (all when None) of each category, category by category."""
    return [e for name in categories for e in load_category(name, limit=limit)]


def score_outputs(entries: list[Entry], outputs: list[tuple[int, str]]) -> dict[str, float]:
    """Per-category accuracy, their mean and `parseable`, from (entry index, model text) pairs (a category
    without entries reads NaN, shown n/a)."""
    valid: dict[str, list[float]] = {name: [] for name in ORDER}
    readable = []
    for index, text in outputs:
        entry = entries[index]
        decoded = decode(text)
        ok, _ = check_decoded(entry.functions, decoded, entry.possible_answer, entry.category)
        valid[entry.category].append(float(ok))
        if CATEGORIES.get(entry.category).rule in CALL_WANTED:
            readable.append(float(decoded.ok and bool(decoded.calls)))
    means = {name: nan_mean(v) for name, v in valid.items()}
    return {"accuracy": nan_mean(list(means.values())), **means, "parseable": nan_mean(readable)}


class BfclBenchmark:
    """The `bfcl` entry of slca.evaluation.benchmarks.BENCHMARKS (its protocol in that module's docstring)."""

    headline = HEADLINE

    def data(self, inputs: BenchmarkInputs) -> DataRef:
        try:
            root = data_dir()
            digest = hashlib.sha256()
            total = evaluated = 0
            for name in selected(inputs.eval_cfg):
                stem = CATEGORIES.get(name).file_stem
                files = [root / f"{FILE_PREFIX}{stem}.json"]
                if CATEGORIES.get(name).has_answers:
                    files.append(root / "possible_answer" / f"{FILE_PREFIX}{stem}.json")
                contents = [path.read_bytes() for path in files]
                for path, raw in zip(files, contents):
                    digest.update(path.relative_to(root).as_posix().encode() + b"\0" + raw)
                # One entry per non-blank line, as load_category reads them (it refuses a malformed file
                # when `evaluate` loads it, before any request): counted here without parsing every row twice.
                n = sum(1 for line in contents[0].decode("utf-8", "replace").splitlines() if line.strip())
                total += n
                evaluated += min(n, inputs.eval_cfg.limit) if inputs.eval_cfg.limit else n
        except BfclDataError as exc:
            raise BenchmarkDataError(f"eval.benchmark=bfcl: {exc}") from None
        except OSError as exc:
            raise BenchmarkDataError(f"eval.benchmark=bfcl: {exc.filename}: cannot read: {exc.strerror}") from None
        return DataRef(str(root), digest.hexdigest(), total, evaluated)

    def scoring(self, inputs: BenchmarkInputs) -> Scoring:
        return Scoring("bfcl", "bfcl_ast_checker", None, "none: single-turn calls are checked, not run")

    def evaluate(self, generator: Any, inputs: BenchmarkInputs) -> list[CellResult]:
        try:
            entries = load_entries(inputs.eval_cfg.limit, selected(inputs.eval_cfg))
        except BfclDataError as exc:
            raise BenchmarkDataError(f"eval.benchmark=bfcl: {exc}") from None
        rows = [e.row() for e in entries]
        # Single turn: the first answer is scored, so no tool round follows it.
        cfg = dataclasses.replace(inputs.rollout_cfg, max_tool_rounds=0)
        # No simulator: with max_tool_rounds=0 the loop never executes a call.
        return evaluate_grid(rows, generator=generator, simulator=None, rollout_cfg=cfg, inputs=inputs, label="bfcl",
                             score=lambda batch: score_outputs(entries, [(t.row_index, t.solution_text) for t in batch]))


BENCHMARKS.register("bfcl")(BfclBenchmark())
