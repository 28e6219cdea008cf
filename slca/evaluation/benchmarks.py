"""Benchmark registry: what `eval.benchmark` names (docs/eval.md#benchmarks).

Protocol for a benchmark (register an instance with `@BENCHMARKS.register("name")` on a class
whose instance is registered, or `BENCHMARKS.register("name")(obj)`):

    data(inputs: BenchmarkInputs) -> DataRef
        Which data it will score (path, content sha256, row count), before anything is sampled;
        it goes into the protocol card. Raise `BenchmarkDataError` (one line naming the file) when
        the data cannot be used.

    evaluate(generator, inputs: BenchmarkInputs) -> list[CellResult]
        One CellResult per `protocol_cells(inputs.eval_cfg)` cell, in that order. Each holds the
        per-seed means of its metrics (`per_seed`, one dict per seed of `inputs.seeds`, metric name
        -> float, plus "rows" and "skipped_rows") and their mean ± std over seeds (`metrics`,
        `cell_result()` builds both). Sample with `generator` (the Generator protocol of
        slca.rollout) under `inputs.rollout_cfg` (eval's own caps and decoding), seed by seed;
        `inputs.n` samples per row. Metric names are the benchmark's own; `headline` lists those
        the tables show, in order. `harness.run_grid` builds the results from one `SeedRun` per
        (cell, seed) and fails a cell none of whose seeds evaluated a row (unless
        eval.allow_empty_cells).

    preflight(eval_cfg: EvalConfig) -> None   (optional)
        Refuse, in one line (a RunError), what would make every row fail (a missing environment, an
        endpoint key that is not set), before any model loads or any row is sampled.

    headline_for(eval_cfg: EvalConfig) -> tuple[str, ...]   (optional)
        The headline when it depends on the configuration (lm_eval's tasks); else `headline`.

    loads_model_itself: bool   (optional, default False)
        True for a benchmark that loads `inputs.model_dir` itself (lm_eval): the eval stage then
        builds no generator and `evaluate` receives None.

A benchmark lives in its own module; modules outside this package are listed in `_LAZY` and
imported the first time their name is asked for, so this registry never imports them eagerly. Its
name (and the categories it can be limited to) is also listed in slca/config/benchmarks.py, which
validating `eval.benchmark` reads instead of this registry.
"""

from __future__ import annotations

import hashlib
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from slca.config.groups.eval import EvalConfig
from slca.registry import Registry
from slca.rollout.config import RolloutConfig

# name -> module that registers it on import (kept lazy: a benchmark may need heavy packages).
_LAZY: dict[str, str] = {"bfcl": "slca.evaluation.bfcl", "bfcl_multi_turn": "slca.evaluation.bfcl.multi_turn",
                         "tau2": "slca.evaluation.tau2", "acebench": "slca.evaluation.acebench",
                         "lm_eval": "slca.evaluation.lmeval"}


class BenchmarkDataError(ValueError):
    """A benchmark's data is missing or unusable; str() is the one-line message for the user."""


@dataclass(frozen=True)
class DataRef:
    """The data a number was computed on: where, which bytes, how many rows."""

    path: str
    sha256: str
    rows: int
    rows_evaluated: int
    versions: dict[str, str] | None = None  # task -> version, for a benchmark whose tasks are versioned (lm_eval)


@dataclass(frozen=True)
class Scoring:
    """How a benchmark's numbers were scored: the scorer, its success threshold (None where the scorer's
    verdict is pass/fail itself) and what answered the model's tool calls."""

    benchmark: str
    reward: str
    success_threshold: float | None
    simulator: str


@dataclass(frozen=True)
class BenchmarkInputs:
    """Everything a benchmark may use besides the generator.

    seeds: the seeds actually run (at temperature 0 only the first of eval.seeds).
    split_path: the data stage's file for eval.split (None when the run has no data stage output).
    reward_cfg / simulator_cfg: the spec's reward and simulator groups (toucan scores and answers with them).
    model_dir / device: the evaluated model's directory (None for a policy in memory) and the stage's device.
    """

    eval_cfg: EvalConfig
    tokenizer: Any
    rollout_cfg: RolloutConfig
    seeds: tuple[int, ...]
    split_path: Path | None
    reward_cfg: Any
    simulator_cfg: Any
    progress: bool = True
    model_dir: str | None = None
    device: str = "cpu"

    @property
    def n(self) -> int:
        return self.eval_cfg.n


class Benchmark(Protocol):
    headline: tuple[str, ...]

    def data(self, inputs: BenchmarkInputs) -> DataRef: ...

    def scoring(self, inputs: BenchmarkInputs) -> Scoring: ...

    def evaluate(self, generator: Any, inputs: BenchmarkInputs) -> list[Any]: ...


BENCHMARKS: Registry[Benchmark] = Registry("benchmark")


def get_benchmark(name: str) -> Benchmark:
    """The benchmark registered under `name`, importing its module first when it is a lazy one."""
    _ensure_builtin()
    if name not in BENCHMARKS and name in _LAZY:
        importlib.import_module(_LAZY[name])
    return BENCHMARKS.get(name)


def _ensure_builtin() -> None:
    importlib.import_module("slca.evaluation.toucan")  # registers "toucan"


def benchmark_preflight(cfg: EvalConfig) -> None:
    """The benchmark's own check that it can run at all (its `preflight`, when it has one)."""
    check = getattr(get_benchmark(cfg.benchmark), "preflight", None)
    if check is not None:
        check(cfg)


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def rows_evaluated(total: int, cfg: EvalConfig) -> int:
    return min(total, cfg.limit) if cfg.limit else total

