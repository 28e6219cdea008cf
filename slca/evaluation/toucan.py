"""`toucan` benchmark: the data stage's eval split (in-domain, docs/method.md#in-domain-metrics).

Every row is rolled out `eval.n` times per (protocol cell, seed) with the run's tool simulator, by
the same multi-turn loop training uses, scored with HierR and with exact match, and reduced to
per-seed means (Name F1, ArgMatch, Process, Success at reward.success_threshold, exact match).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from slca.config.groups.reward import ExactMatchReward, HierRReward
from slca.evaluation.benchmarks import BENCHMARKS, BenchmarkDataError, BenchmarkInputs, DataRef, Scoring, file_sha256, rows_evaluated
from slca.evaluation.harness import CellResult, evaluate_grid, nan_mean
from slca.rewards import RewardFunction

HEADLINE = ("success", "process", "name_f1", "arg_match", "exact", "parseable", "tool_rounds")


def row_metrics(hierr: Mapping[str, Any], exact: Mapping[str, Any], trajectory: Any) -> dict[str, float]:
    """The headline metrics of one rollout; `success` is HierR's own (normalised score >= reward.success_threshold)."""
    needs_call = float(hierr.get("gold_tool_count", 0)) > 0
    made_calls = float(hierr.get("tag_denom", 0)) > 0
    all_valid = float(hierr.get("tag_valid_pair_n", 0)) == float(hierr.get("tag_denom", 0))
    return {
        "success": float(hierr["success"]),
        "process": float(hierr["process_score"]),
        "name_f1": float(hierr["name_f1"]),
        "arg_match": float(hierr["arg_match"]),
        "exact": float(exact["score"]),
        # Over rows whose gold needs a call: the response made calls and every block parsed.
        "parseable": float(made_calls and all_valid) if needs_call else float("nan"),
        "tool_rounds": float(trajectory.n_tool_rounds),
    }


def hierr_config(reward_cfg: Any) -> HierRReward:
    """The HierR settings evaluation scores with: the run's own, or HierR's defaults under exact match."""
    return reward_cfg if isinstance(reward_cfg, HierRReward) else HierRReward()


class ToucanBenchmark:
    headline = HEADLINE

    def _rows(self, inputs: BenchmarkInputs) -> list[dict[str, Any]]:
        from slca.data.io import read_rows

        if inputs.split_path is None:
            raise BenchmarkDataError(f"eval.benchmark=toucan: this run has no '{inputs.eval_cfg.split}' split (add the data stage)")
        rows = list(read_rows(inputs.split_path))
        return rows[: inputs.eval_cfg.limit] if inputs.eval_cfg.limit else rows

    def data(self, inputs: BenchmarkInputs) -> DataRef:
        from slca.data.io import read_rows

        if inputs.split_path is None or not inputs.split_path.is_file():
            raise BenchmarkDataError(f"eval.benchmark=toucan: split file not found: {inputs.split_path}")
        total = sum(1 for _ in read_rows(inputs.split_path))
        return DataRef(str(inputs.split_path), file_sha256(inputs.split_path), total, rows_evaluated(total, inputs.eval_cfg))

    def scoring(self, inputs: BenchmarkInputs) -> Scoring:
        return Scoring("toucan", inputs.reward_cfg.name, hierr_config(inputs.reward_cfg).success_threshold, inputs.simulator_cfg.name)

    def evaluate(self, generator: Any, inputs: BenchmarkInputs) -> list[CellResult]:
        from slca.sim import build_simulator

        rows = self._rows(inputs)
        hierr = RewardFunction(hierr_config(inputs.reward_cfg))
        exact = RewardFunction(inputs.reward_cfg if isinstance(inputs.reward_cfg, ExactMatchReward) else ExactMatchReward())

        def score(batch: Any) -> dict[str, float]:
            source = [rows[t.row_index] for t in batch]
            args = (
                [t.solution_text for t in batch],
                [r["reward_model"]["ground_truth"] for r in source],
                [r.get("extra_info") for r in source],
            )
            per_row = [row_metrics(h, e, t) for h, e, t in zip(hierr.score_batch(*args), exact.score_batch(*args), batch)]
            return {k: nan_mean([m[k] for m in per_row]) for k in HEADLINE}

        return evaluate_grid(rows, generator=generator, simulator=build_simulator(inputs.simulator_cfg), rollout_cfg=inputs.rollout_cfg,
                             inputs=inputs, label="eval", score=score)


BENCHMARKS.register("toucan")(ToucanBenchmark())
