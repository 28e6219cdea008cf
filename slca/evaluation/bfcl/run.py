"""`bfcl` benchmark: BFCL's single-turn categories rolled out by slca's loop (docs/bfcl.md#running-it).

Every category of slca.evaluation.bfcl.data.CATEGORIES is evaluated (`eval.limit` caps the
entries taken from each). Each entry becomes a row whose prompt is built by the protocol cell
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

from slca.evaluation.benchmarks import BENCHMARKS, BenchmarkDataError, BenchmarkInputs, DataRef
from slca.evaluation.bfcl.data import CATEGORIES, FILE_PREFIX, ORDER, BfclDataError, Entry, data_dir, load_category
from slca.evaluation.bfcl.decode import decode
from slca.evaluation.bfcl.score import check
from slca.evaluation.harness import CellResult, cell_result, nan_mean, protocol_cells
from slca.rollout import run_rollouts
from slca.rollout.protocol import protocol_prompt_fn

HEADLINE = ("accuracy", *ORDER, "parseable")
CALL_WANTED = ("single", "parallel", "relevance")  # checker rules of the categories that want a call


def load_entries(limit: int | None) -> list[Entry]:
    """The first `limit` entries (all when None) of every category, category by category."""
    return [e for name in ORDER for e in load_category(name, limit=limit)]


def score_outputs(entries: list[Entry], outputs: list[tuple[int, str]]) -> dict[str, float]:
    """Per-category accuracy, their mean and `parseable`, from (entry index, model text) pairs."""
    valid: dict[str, list[float]] = {name: [] for name in ORDER}
    readable = []
    for index, text in outputs:
        entry = entries[index]
        ok, _ = check(entry.functions, text, entry.possible_answer, entry.category)
        valid[entry.category].append(float(ok))
        if CATEGORIES.get(entry.category).rule in CALL_WANTED:
            decoded = decode(text)
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
            for name in ORDER:
                stem = CATEGORIES.get(name).file_stem
                files = [root / f"{FILE_PREFIX}{stem}.json"]
                if CATEGORIES.get(name).has_answers:
                    files.append(root / "possible_answer" / f"{FILE_PREFIX}{stem}.json")
                for path in files:
                    digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
                n = len(load_category(name))
                total += n
                evaluated += min(n, inputs.eval_cfg.limit) if inputs.eval_cfg.limit else n
        except BfclDataError as exc:
            raise BenchmarkDataError(f"eval.benchmark=bfcl: {exc}") from None
        except OSError as exc:
            raise BenchmarkDataError(f"eval.benchmark=bfcl: {exc.filename}: cannot read: {exc.strerror}") from None
        return DataRef(str(root), digest.hexdigest(), total, evaluated)

    def evaluate(self, generator: Any, inputs: BenchmarkInputs) -> list[CellResult]:
        from rich.progress import Progress

        try:
            entries = load_entries(inputs.eval_cfg.limit)
        except BfclDataError as exc:
            raise BenchmarkDataError(f"eval.benchmark=bfcl: {exc}") from None
        rows = [e.row() for e in entries]
        # Single turn: the first answer is scored, so no tool round follows it.
        cfg = dataclasses.replace(inputs.rollout_cfg, max_tool_rounds=0)
        cells = protocol_cells(inputs.eval_cfg)
        results = []
        with Progress(transient=True, disable=not inputs.progress) as bar:
            task = bar.add_task("bfcl", total=len(cells) * len(inputs.seeds))
            for cell in cells:
                prompt_fn = protocol_prompt_fn(system_prompt=cell.system_prompt, construction=cell.construction,
                                               thinking=cell.thinking)
                per_seed = []
                for seed in inputs.seeds:
                    bar.update(task, description=f"bfcl {cell.label} seed {seed}")
                    # No simulator: with max_tool_rounds=0 the loop never executes a call.
                    batch = run_rollouts(rows, n=inputs.n, generator=generator, simulator=None, tokenizer=inputs.tokenizer,
                                         cfg=cfg, seed=seed, prompt_fn=prompt_fn)
                    metrics = score_outputs(entries, [(t.row_index, t.solution_text) for t in batch])
                    rolled = len({t.row_index for t in batch})
                    metrics["rows"] = float(rolled)
                    metrics["skipped_rows"] = float(len(rows) - rolled)
                    per_seed.append(metrics)
                    bar.advance(task)
                results.append(cell_result(cell, inputs.seeds, per_seed))
        return results


BENCHMARKS.register("bfcl")(BfclBenchmark())
