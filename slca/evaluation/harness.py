"""Evaluate a policy on tool-calling rows under a grid of prompt protocols.

For each protocol cell (construction x thinking x system prompt) and each seed, every row is
rolled out once with the tool simulator, scored with HierR and with exact match, and reduced to
per-seed means; cells report mean ± std over seeds (slca.rewards.metrics).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from slca.config.groups.eval import EvalConfig
from slca.config.groups.reward import ExactMatchReward, HierRReward
from slca.rewards import compute_score_batch
from slca.rewards.metrics import MeanStd, mean_std
from slca.rollout import RolloutConfig, run_rollouts
from slca.rollout.protocol import protocol_prompt_fn

HEADLINE = ("exact", "parseable", "name_f1", "arg_match", "process", "success", "tool_rounds")


@dataclass(frozen=True)
class ProtocolCell:
    """One evaluation protocol: how prompts are built."""

    construction: str
    thinking: str
    system_prompt: str

    @property
    def label(self) -> str:
        return f"{self.construction}/{self.thinking}/{self.system_prompt}"


def protocol_cells(cfg: EvalConfig) -> list[ProtocolCell]:
    """Every combination of the configured factors, in a stable order."""
    return [ProtocolCell(c, t, s) for c, t, s in itertools.product(cfg.templates, cfg.thinking, cfg.system_prompts)]


@dataclass
class CellResult:
    """Mean ± std over seeds of each metric for one protocol cell, plus the per-seed means."""

    cell: ProtocolCell
    metrics: dict[str, MeanStd]
    per_seed: list[dict[str, float]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "protocol": {"construction": self.cell.construction, "thinking": self.cell.thinking, "system_prompt": self.cell.system_prompt},
            "metrics": {k: {"mean": v.mean, "std": v.std, "n": v.n} for k, v in self.metrics.items()},
            "per_seed": self.per_seed,
        }


def row_metrics(hierr: Mapping[str, Any], exact: Mapping[str, Any], trajectory: Any) -> dict[str, float]:
    """The headline metrics of one rollout; `success` is HierR's own (normalised score >= reward.success_threshold)."""
    needs_call = float(hierr.get("gold_tool_count", 0)) > 0
    made_calls = float(hierr.get("tag_denom", 0)) > 0
    all_valid = float(hierr.get("tag_valid_pair_n", 0)) == float(hierr.get("tag_denom", 0))
    return {
        "exact": float(exact["score"]),
        # Over rows whose gold needs a call: the response made calls and every block parsed.
        "parseable": float(made_calls and all_valid) if needs_call else float("nan"),
        "name_f1": float(hierr["name_f1"]),
        "arg_match": float(hierr["arg_match"]),
        "process": float(hierr["process_score"]),
        "success": float(hierr["success"]),
        "tool_rounds": float(trajectory.n_tool_rounds),
    }


def hierr_config(reward_cfg: Any) -> HierRReward:
    """The HierR settings evaluation scores with: the run's own, or HierR's defaults under exact match."""
    return reward_cfg if isinstance(reward_cfg, HierRReward) else HierRReward()


def _mean(values: Sequence[float]) -> float:
    finite = [v for v in values if v == v]
    return sum(finite) / len(finite) if finite else float("nan")


def evaluate(
    rows: Sequence[Mapping[str, Any]],
    *,
    generator: Any,
    simulator: Any,
    tokenizer: Any,
    eval_cfg: EvalConfig,
    rollout_cfg: RolloutConfig,
    reward_cfg: Any,
    progress: bool = True,
) -> list[CellResult]:
    """Roll out and score `rows` once per (protocol cell, seed); see the module docstring."""
    from rich.progress import Progress

    hierr_cfg = hierr_config(reward_cfg)
    exact_cfg = reward_cfg if isinstance(reward_cfg, ExactMatchReward) else ExactMatchReward()
    rows = list(rows)[: eval_cfg.max_samples] if eval_cfg.max_samples else list(rows)
    cfg = RolloutConfig(**{**rollout_cfg.__dict__, "temperature": eval_cfg.temperature, "top_p": eval_cfg.top_p})
    results = []
    cells = protocol_cells(eval_cfg)
    bar = Progress(transient=True, disable=not progress)
    task = bar.add_task("eval", total=len(cells) * len(eval_cfg.seeds))
    bar.start()
    for cell in cells:
        prompt_fn = protocol_prompt_fn(system_prompt=cell.system_prompt, construction=cell.construction, thinking=cell.thinking)
        per_seed = []
        for seed in eval_cfg.seeds:
            bar.update(task, description=f"eval {cell.label} seed {seed}")
            batch = run_rollouts(rows, n=1, generator=generator, simulator=simulator, tokenizer=tokenizer, cfg=cfg, seed=seed, prompt_fn=prompt_fn)
            source = [rows[t.row_index] for t in batch]
            args = (
                [r.get("data_source", "") for r in source],
                [t.solution_text for t in batch],
                [r["reward_model"]["ground_truth"] for r in source],
                [r.get("extra_info") for r in source],
            )
            hierr = compute_score_batch(*args, reward_config=hierr_cfg)
            exact = compute_score_batch(*args, reward_config=exact_cfg)
            per_row = [row_metrics(h, e, t) for h, e, t in zip(hierr, exact, batch)]
            seed_means = {k: _mean([m[k] for m in per_row]) for k in HEADLINE}
            seed_means["rows"] = float(len(per_row))
            seed_means["skipped_rows"] = float(len(rows) - len(per_row))
            per_seed.append(seed_means)
            bar.advance(task)
        metrics = {k: mean_std([s[k] for s in per_seed], ddof=1) for k in (*HEADLINE, "rows", "skipped_rows")}
        results.append(CellResult(cell, metrics, per_seed))
    bar.stop()
    return results
