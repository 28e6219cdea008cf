"""The protocol grid every benchmark is evaluated under, and the per-cell result it returns.

A cell is one (construction, thinking, system prompt) combination; within it each seed gives one
set of per-seed means, and the cell reports mean ± sample std over seeds (slca.rewards.metrics).
A cell that evaluated no row at all is an error (`EmptyCellError`) unless `eval.allow_empty_cells`.

In memory a number not measured is NaN; the JSON forms (`as_dict`) write it as null, a {mean, std,
n} with its reason (docs/eval.md#resultsjson): JSON has no NaN.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from slca.config.groups.eval import EvalConfig
from slca.rewards.metrics import MeanStd, mean_std
from slca.runcontext import RunError

if TYPE_CHECKING:
    from slca.rollout.types import RolloutStats

FACTORS = ("construction", "thinking", "system_prompt")


@dataclass(frozen=True)
class ProtocolCell:
    """One evaluation protocol: how prompts are built."""

    construction: str
    thinking: str
    system_prompt: str

    @property
    def label(self) -> str:
        return f"{self.construction}/{self.thinking}/{self.system_prompt}"

    def level(self, factor: str) -> str:
        return str(getattr(self, factor))

    def as_dict(self) -> dict[str, str]:
        return {f: self.level(f) for f in FACTORS}

    def prompt_fn(self) -> Any:
        """The rollout prompt builder of this protocol."""
        from slca.rollout.protocol import protocol_prompt_fn

        return protocol_prompt_fn(system_prompt=self.system_prompt, construction=self.construction, thinking=self.thinking)


def protocol_cells(cfg: EvalConfig) -> list[ProtocolCell]:
    """Every combination of the configured factors, in a stable order."""
    return [ProtocolCell(c, t, s) for c, t, s in itertools.product(cfg.constructions, cfg.thinking, cfg.system_prompts)]


def effective_seeds(cfg: EvalConfig) -> tuple[tuple[int, ...], str | None]:
    """The seeds to run and a one-line note when some were dropped.

    At temperature 0 every generator decodes greedily, so further seeds repeat the first run
    exactly; they are collapsed (not refused) so one grid file serves both greedy and sampled runs.
    """
    seeds = tuple(cfg.seeds)
    if cfg.temperature == 0 and len(seeds) > 1:
        return seeds[:1], (f"eval: temperature 0 is greedy, so seeds {list(seeds)} give identical runs; "
                           f"running seed {seeds[0]} only (set eval.temperature > 0 to vary seeds)")
    return seeds, None


def nan_mean(values: Sequence[float]) -> float:
    """Mean of the finite values (NaN marks 'not applicable to this row'); NaN when none."""
    finite = [v for v in values if v == v]
    return sum(finite) / len(finite) if finite else float("nan")


def finite_or_null(value: float) -> float | None:
    """`value`, or None where it is NaN or infinite (JSON has no such number)."""
    return value if math.isfinite(value) else None


def stats_json(value: MeanStd, missing: str) -> dict[str, Any]:
    """{mean, std, n} of one statistic for JSON; one not measured (n == 0) is null with `missing` as its reason."""
    out: dict[str, Any] = {"mean": finite_or_null(value.mean), "std": finite_or_null(value.std), "n": value.n}
    if out["mean"] is None or out["std"] is None:
        out["reason"] = missing if value.n == 0 else "not a finite number"
    return out


class EmptyCellError(RunError):
    """A protocol cell evaluated no row; str() names the cell, what was skipped and why."""


@dataclass(frozen=True)
class SeedRun:
    """One (cell, seed) batch reduced: its per-seed metric means, how many rows (conversations, τ²
    simulations) it evaluated, and why the others were not (one phrase naming the cap or cause)."""

    metrics: dict[str, float]
    evaluated: int
    skipped: str = ""


@dataclass
class CellResult:
    """Mean ± std over seeds of each metric for one protocol cell, plus the per-seed means.

    empty: why the cell evaluated no row (kept only under eval.allow_empty_cells), else "".
    """

    cell: ProtocolCell
    metrics: dict[str, MeanStd]
    per_seed: list[dict[str, float]] = field(default_factory=list)
    seeds: tuple[int, ...] = ()
    empty: str = ""

    def as_dict(self) -> dict[str, Any]:
        missing = f"no row evaluated: {self.empty}" if self.empty else "applies to no evaluated row of any seed"
        return {
            "protocol": self.cell.as_dict(),
            "seeds": list(self.seeds),
            "metrics": {k: stats_json(v, missing) for k, v in self.metrics.items()},
            "per_seed": [{k: finite_or_null(v) for k, v in s.items()} for s in self.per_seed],
        }


def cell_result(cell: ProtocolCell, seeds: Sequence[int], per_seed: list[dict[str, float]], empty: str = "") -> CellResult:
    """A CellResult from one dict of metric means per seed (same keys in each)."""
    if len(per_seed) != len(seeds) or not per_seed:
        raise ValueError(f"cell {cell.label}: {len(per_seed)} per-seed results for {len(seeds)} seeds")
    keys = list(per_seed[0])
    metrics = {k: mean_std([s[k] for s in per_seed if s[k] == s[k]], ddof=1) for k in keys}
    return CellResult(cell, metrics, per_seed, tuple(seeds), empty)


def run_grid(inputs: Any, label: str, run_cell: Callable[[ProtocolCell, int], SeedRun]) -> list[CellResult]:
    """`run_cell(cell, seed)` (one rollout batch reduced) once per (protocol cell, seed) of
    `inputs.eval_cfg`, with one progress bar; the loop every benchmark's grid runs through.

    A cell none of whose seeds evaluated a row raises EmptyCellError naming why, unless
    eval.allow_empty_cells: its numbers would be NaN dressed as a result."""
    from slca.terminal import progress_bar

    allow_empty = inputs.eval_cfg.allow_empty_cells
    cells = protocol_cells(inputs.eval_cfg)
    results = []
    with progress_bar(enabled=inputs.progress) as bar:
        task = bar.add_task(label, total=len(cells) * len(inputs.seeds))
        for cell in cells:
            runs = []
            for seed in inputs.seeds:
                bar.update(task, description=f"{label} {cell.label} seed {seed}")
                runs.append(run_cell(cell, seed))
                bar.advance(task)
            empty = ""
            if not any(r.evaluated for r in runs):
                empty = runs[0].skipped or "nothing to evaluate"
                seeds = f"seed {inputs.seeds[0]}" if len(runs) == 1 else f"any of seeds {list(inputs.seeds)}"
                message = f"eval cell {cell.label}: no row evaluated in {seeds} ({empty})"
                if not allow_empty:
                    raise EmptyCellError(f"{message}; set eval.allow_empty_cells=true to record it as empty")
                print(f"[eval] {message}; recorded as empty (eval.allow_empty_cells)", flush=True)
            results.append(cell_result(cell, inputs.seeds, [r.metrics for r in runs], empty))
    return results


def evaluate_grid(
    rows: Sequence[Any], *, generator: Any, simulator: Any, rollout_cfg: Any, inputs: Any, label: str,
    score: Callable[[Sequence[Any]], dict[str, float]],
) -> list[CellResult]:
    """Roll `rows` out once per (protocol cell, seed) of `inputs.eval_cfg` and reduce each batch to its
    per-seed means with `score(trajectories)`, so rows rolled out and rows skipped (over the prompt
    cap) are counted the same way by every single-conversation benchmark.

    Prompts are rendered once per cell (its seeds reuse them) and each distinct piece of them
    tokenised once per grid (slca.rollout.chat.PromptCache), or not at all where the loop can tell
    that the cap does not bind them and nothing reads their ids (run_rollouts' keep_prompt_ids)."""
    from slca.rollout import run_rollouts
    from slca.rollout.chat import PromptCache

    cache = PromptCache()
    builders: dict[ProtocolCell, Any] = {}

    def run_cell(cell: ProtocolCell, seed: int) -> SeedRun:
        prompt_fn = builders.setdefault(cell, cell.prompt_fn())
        batch = run_rollouts(rows, n=inputs.n, generator=generator, simulator=simulator, tokenizer=inputs.tokenizer,
                             cfg=rollout_cfg, seed=seed, prompt_fn=prompt_fn, cache=cache, keep_prompt_ids=False)
        metrics = score(batch)
        rolled = len({t.row_index for t in batch})
        metrics["rows"] = float(rolled)
        metrics["skipped_rows"] = float(len(rows) - rolled)
        return SeedRun(metrics, rolled, skip_note(batch.stats, rollout_cfg.max_prompt_length))

    return run_grid(inputs, label, run_cell)


def skip_note(stats: RolloutStats, cap: int) -> str:
    """Why a rollout batch's rows were not rolled out (its RolloutStats), as one phrase; "" when none were skipped."""
    parts = []
    if stats.overlong_rows:
        parts.append(f"{len(stats.overlong_rows)} of {stats.rows_in} rows have a prompt over eval.rollout.max_prompt_length={cap} tokens, "
                     f"the longest {stats.longest_prompt}")
    if stats.bad_rows:
        index, name, reason = stats.bad_rows[0]
        parts.append(f"{len(stats.bad_rows)} of {stats.rows_in} rows cannot be rendered (first: row {index} {name}: {reason})")
    if not stats.rows_in:
        parts.append("no rows to evaluate")
    return "; ".join(parts)
