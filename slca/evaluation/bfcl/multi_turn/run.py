"""`bfcl_multi_turn` benchmark: BFCL's multi-turn categories through slca's protocol grid (docs/bfcl.md#multi-turn).

`eval.categories` picks the categories (null: all four); `eval.limit` caps the entries taken
from each. Per (protocol cell, seed) every entry is rolled out `eval.n` times by
slca.evaluation.bfcl.multi_turn.loop and each conversation is checked by BFCL's checkers
(slca.evaluation.bfcl.multi_turn.check). Per seed: each category's accuracy (fraction of correct
conversations), `accuracy` (their unweighted mean over the selected categories; a category not
selected reads n/a), `turns_with_calls` (turns whose gold wants calls in which the model executed
at least one call), `force_quit` (conversations ended by the step limit or an overlong prompt),
`steps_per_turn` (assistant steps per turn asked).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from slca.evaluation.benchmarks import BENCHMARKS, BenchmarkDataError, BenchmarkInputs, DataRef, Scoring
from slca.evaluation.bfcl.data import BfclDataError, data_dir
from slca.evaluation.bfcl.multi_turn.check import check
from slca.evaluation.bfcl.multi_turn.data import CATEGORIES, CLASSES, FUNC_DOC_DIR, Loaded, category_files, load_category, load_function_docs
from slca.evaluation.bfcl.multi_turn.loop import DONE, Conversation, run_conversations
from slca.evaluation.harness import CellResult, ProtocolCell, SeedRun, nan_mean, run_grid

NAME = "bfcl_multi_turn"
HEADLINE = ("accuracy", *CATEGORIES, "turns_with_calls", "force_quit")


def selected(cfg: Any) -> tuple[str, ...]:
    """The categories `eval.categories` names, in BFCL's order (all when null)."""
    chosen = cfg.categories
    return tuple(c for c in CATEGORIES if chosen is None or c in chosen)


def load(cfg: Any) -> dict[str, Loaded]:
    """The selected categories' entries (the first eval.limit rows of each) and skipped rows."""
    root = data_dir()
    docs = load_function_docs(root)
    return {name: load_category(name, root=root, limit=cfg.limit, docs=docs) for name in selected(cfg)}


def score(convs: Sequence[Conversation], categories: Sequence[str]) -> dict[str, float]:
    """Per-seed metrics of one batch of conversations (the module docstring)."""
    correct: dict[str, list[float]] = {name: [] for name in CATEGORIES}
    called, steps = [], []
    for conv in convs:
        correct[conv.entry.category].append(float(check(conv.entry, conv.decoded).valid))
        for turn, gold in enumerate(conv.entry.ground_truth[: len(conv.decoded)]):
            steps.append(float(len(conv.outputs[turn])))
            if gold:
                called.append(float(bool(conv.decoded[turn])))
    per_category = {name: nan_mean(v) if name in categories else float("nan") for name, v in correct.items()}
    return {
        "accuracy": nan_mean([per_category[c] for c in categories]),
        **per_category,
        "turns_with_calls": nan_mean(called),
        "force_quit": nan_mean([float(c.finish != DONE) for c in convs]),
        "steps_per_turn": nan_mean(steps),
    }


class BfclMultiTurnBenchmark:
    """The `bfcl_multi_turn` entry of slca.evaluation.benchmarks.BENCHMARKS."""

    headline = HEADLINE

    def data(self, inputs: BenchmarkInputs) -> DataRef:
        cfg = inputs.eval_cfg
        try:
            loaded = load(cfg)
            root = data_dir()
            digest = hashlib.sha256()
            files = [p for name in selected(cfg) for p in category_files(name, root)]
            files += [root / FUNC_DOC_DIR / doc for _, doc in CLASSES.values()]
            for path in files:
                digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
            total = sum(sum(1 for line in category_files(name, root)[0].read_text(encoding="utf-8").splitlines() if line.strip())
                        for name in selected(cfg))
        except BfclDataError as exc:
            raise BenchmarkDataError(f"eval.benchmark={NAME}: {exc}") from None
        except OSError as exc:
            raise BenchmarkDataError(f"eval.benchmark={NAME}: {exc.filename}: cannot read: {exc.strerror}") from None
        bad = [b for part in loaded.values() for b in part.bad]
        for b in bad:
            print(f"[eval] {NAME}: skipped {b}")
        usable = sum(len(part.entries) for part in loaded.values())
        if not usable:
            raise BenchmarkDataError(f"eval.benchmark={NAME}: no usable entry in {', '.join(selected(cfg))} ({len(bad)} rows skipped)")
        return DataRef(str(root), digest.hexdigest(), total, usable)

    def scoring(self, inputs: BenchmarkInputs) -> Scoring:
        return Scoring(NAME, "bfcl_state_and_response_checkers", None, "bfcl environments through slca's executor")

    def evaluate(self, generator: Any, inputs: BenchmarkInputs) -> list[CellResult]:
        cfg = inputs.eval_cfg
        try:
            loaded = load(cfg)
        except BfclDataError as exc:
            raise BenchmarkDataError(f"eval.benchmark={NAME}: {exc}") from None
        entries = [e for part in loaded.values() for e in part.entries]
        skipped = float(sum(len(part.bad) for part in loaded.values()))
        categories = selected(cfg)

        def run_cell(cell: ProtocolCell, seed: int) -> SeedRun:
            convs = run_conversations(entries, n=inputs.n, generator=generator, tokenizer=inputs.tokenizer,
                                      cfg=inputs.rollout_cfg, seed=seed, prompt_fn=cell.prompt_fn())
            metrics = {**score(convs, categories), "rows": float(len(entries)), "skipped_rows": skipped}
            # A conversation whose first prompt overflowed scores as failed (BFCL's rule) but never reached the model.
            unasked = [c for c in convs if not any(c.outputs)]
            why = (f"{len(unasked)} of {len(convs)} conversations have a first prompt over eval.rollout.max_prompt_length="
                   f"{inputs.rollout_cfg.max_prompt_length} tokens, the longest {max(c.overflow_tokens for c in unasked)}") if unasked else ""
            return SeedRun(metrics, len(convs) - len(unasked), why)

        return run_grid(inputs, NAME, run_cell)


BENCHMARKS.register(NAME)(BfclMultiTurnBenchmark())
