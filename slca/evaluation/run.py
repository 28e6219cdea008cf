"""Evaluate one model: the only path from a generator to evaluation numbers, and it returns them
with their protocol card (`EvalResult`)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slca.config.groups.eval import EvalConfig
from slca.evaluation.benchmarks import BenchmarkInputs, get_benchmark
from slca.evaluation.card import ModelRef, ProtocolCard, build_card, weights_sha256
from slca.evaluation.harness import CellResult, effective_seeds, stats_json
from slca.evaluation.sensitivity import Effect, factor_effects, seed_spread
from slca.rewards.metrics import MeanStd
from slca.rollout.config import RolloutConfig

SCHEMA_VERSION = 2  # 2: the card's factors.templates is factors.constructions


def eval_rollout_config(cfg: EvalConfig) -> RolloutConfig:
    """Evaluation's own caps and decoding as the rollout loop's settings (nothing from train.rl)."""
    caps = cfg.rollout
    return RolloutConfig(
        max_prompt_length=caps.max_prompt_length, max_response_length=caps.max_response_length,
        max_assistant_turns=caps.max_assistant_turns, max_tool_rounds=caps.max_tool_rounds,
        max_parallel_calls=caps.max_parallel_calls, temperature=cfg.temperature, top_p=cfg.top_p,
        max_turn_tokens=cfg.max_tokens,
    )


@dataclass
class EvalResult:
    """One model's numbers with the card they were computed under."""

    card: ProtocolCard
    headline: tuple[str, ...]
    cells: list[CellResult]
    effects: list[Effect]
    seed_spread: dict[str, MeanStd] | None

    @property
    def label(self) -> str:
        return self.card.model.label

    def as_dict(self) -> dict[str, Any]:
        spread = None if self.seed_spread is None else {
            k: stats_json(v, "no cell measured it over two seeds or more") for k, v in self.seed_spread.items()}
        return {
            "card": self.card.as_dict(),
            "headline": list(self.headline),
            "cells": [c.as_dict() for c in self.cells],
            "sensitivity": {"effects": [e.as_dict() for e in self.effects], "seed_spread": spread},
        }


def model_ref(cfg: EvalConfig, label: str, model_dir: str) -> ModelRef:
    served = (cfg.endpoint.model or model_dir) if cfg.generator == "openai" else None
    endpoint = cfg.endpoint.base_url if cfg.generator == "openai" else None
    path = Path(model_dir)
    return ModelRef(label, str(path.resolve()) if path.exists() else str(model_dir), weights_sha256(model_dir), cfg.generator, endpoint, served)


@contextmanager
def heap_left_out_of_gc() -> Iterator[None]:
    """Leave the objects alive now (imported modules, the model, the tokenizer: 330k and more) out of the
    cyclic collector's scans until the block ends: an evaluation allocates enough to trigger full
    collections, and each scanned that heap (~35 ms, up to a quarter of a fast endpoint's request time).
    A process that froze its heap itself keeps it frozen."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def evaluate_model(spec: Any, *, label: str, model_dir: str, generator: Any, tokenizer: Any, split_path: Path | None,
                   device: Any, progress: bool = True) -> EvalResult:
    """Evaluate `generator` (sampling the model in `model_dir`) on spec.eval's benchmark and grid."""
    cfg: EvalConfig = spec.eval
    bench = get_benchmark(cfg.benchmark)
    seeds, note = effective_seeds(cfg)
    inputs = BenchmarkInputs(eval_cfg=cfg, tokenizer=tokenizer, rollout_cfg=eval_rollout_config(cfg), seeds=seeds,
                             split_path=split_path, reward_cfg=spec.reward, simulator_cfg=spec.simulator, progress=progress,
                             model_dir=model_dir if Path(model_dir).is_dir() else None, device=str(device))
    card = build_card(spec=spec, model=model_ref(cfg, label, model_dir), data=bench.data(inputs), scoring=bench.scoring(inputs), seeds=seeds, seed_note=note, device=device)
    with heap_left_out_of_gc():
        cells = bench.evaluate(generator, inputs)
    headline = tuple(bench.headline_for(cfg)) if hasattr(bench, "headline_for") else tuple(bench.headline)
    return EvalResult(card, headline, cells, factor_effects(cells, headline), seed_spread(cells, headline))
