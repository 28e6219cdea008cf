"""The protocol grid every benchmark is evaluated under, and the per-cell result it returns.

A cell is one (construction, thinking, system prompt) combination; within it each seed gives one
set of per-seed means, and the cell reports mean ± sample std over seeds (slca.rewards.metrics).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from slca.config.groups.eval import EvalConfig
from slca.rewards.metrics import MeanStd, mean_std

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
    return [ProtocolCell(c, t, s) for c, t, s in itertools.product(cfg.templates, cfg.thinking, cfg.system_prompts)]


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


@dataclass
class CellResult:
    """Mean ± std over seeds of each metric for one protocol cell, plus the per-seed means."""

    cell: ProtocolCell
    metrics: dict[str, MeanStd]
    per_seed: list[dict[str, float]] = field(default_factory=list)
    seeds: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "protocol": self.cell.as_dict(),
            "seeds": list(self.seeds),
            "metrics": {k: {"mean": v.mean, "std": v.std, "n": v.n} for k, v in self.metrics.items()},
            "per_seed": self.per_seed,
        }


def cell_result(cell: ProtocolCell, seeds: Sequence[int], per_seed: list[dict[str, float]]) -> CellResult:
    """A CellResult from one dict of metric means per seed (same keys in each)."""
    if len(per_seed) != len(seeds) or not per_seed:
        raise ValueError(f"cell {cell.label}: {len(per_seed)} per-seed results for {len(seeds)} seeds")
    keys = list(per_seed[0])
    metrics = {k: mean_std([s[k] for s in per_seed if s[k] == s[k]], ddof=1) for k in keys}
    return CellResult(cell, metrics, per_seed, tuple(seeds))


def run_grid(inputs: Any, label: str, run_cell: Callable[[ProtocolCell, int], dict[str, float]]) -> list[CellResult]:
    """`run_cell(cell, seed)` (the per-seed means of one rollout batch) once per (protocol cell, seed)
    of `inputs.eval_cfg`, with one progress bar; the loop every benchmark's grid runs through."""
    from rich.progress import Progress

    cells = protocol_cells(inputs.eval_cfg)
    results = []
    with Progress(transient=True, disable=not inputs.progress) as bar:
        task = bar.add_task(label, total=len(cells) * len(inputs.seeds))
        for cell in cells:
            per_seed = []
            for seed in inputs.seeds:
                bar.update(task, description=f"{label} {cell.label} seed {seed}")
                per_seed.append(run_cell(cell, seed))
                bar.advance(task)
            results.append(cell_result(cell, inputs.seeds, per_seed))
    return results


def evaluate_grid(
    rows: Sequence[Any], *, generator: Any, simulator: Any, rollout_cfg: Any, inputs: Any, label: str,
    score: Callable[[Sequence[Any]], dict[str, float]],
) -> list[CellResult]:
    """Roll `rows` out once per (protocol cell, seed) of `inputs.eval_cfg` and reduce each batch to its
    per-seed means with `score(trajectories)`, so rows rolled out and rows skipped (over the prompt
    cap) are counted the same way by every single-conversation benchmark."""
    from slca.rollout import run_rollouts

    def run_cell(cell: ProtocolCell, seed: int) -> dict[str, float]:
        batch = run_rollouts(rows, n=inputs.n, generator=generator, simulator=simulator, tokenizer=inputs.tokenizer,
                             cfg=rollout_cfg, seed=seed, prompt_fn=cell.prompt_fn())
        metrics = score(batch)
        rolled = len({t.row_index for t in batch})
        metrics["rows"] = float(rolled)
        metrics["skipped_rows"] = float(len(rows) - rolled)
        return metrics

    return run_grid(inputs, label, run_cell)
