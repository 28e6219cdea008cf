"""`curate_file`: roll every RL prompt out k times and keep those the policy can learn from.

Rows are validated against the RL schema first: with `on_error="fail"` a bad row stops the command,
naming its index and field, before anything is written; with `"skip"` it is dropped as `invalid_row`
(named on stderr, counted in the funnel) and the rest are curated. Structural checks (`turns`, `max_gold_calls`) drop rows
without a rollout; the rest go through the training rollout loop in fixed batches of
`batch_prompts` prompts, k rollouts each, seeded by (run.seed, batch number), and are scored with
the spec's reward: a rollout succeeds when the reward's own `success` says so. Batches are
recorded in the outcome cache as they finish. The kept rows are the input table filtered with
pyarrow (columns, types and values unchanged); they and funnel.json replace the output directory
as a whole (docs/method.md#offline-prompt-curation).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from slca.config.spec import Spec
from slca.curate.cache import OutcomeCache, digest
from slca.curate.policy import PolicySource
from slca.curate.rules import KEEP_MODES, CurateFunnel, pass_rate_histogram, structural_reason
from slca.data.errors import DataInputError

OUT_NAME = "rl.parquet"
FUNNEL_NAME = "funnel.json"
OWNED_FILES = (OUT_NAME, FUNNEL_NAME)


def batch_seed(seed: int, batch: int) -> int:
    """Seed of one rollout batch: fixed by (seed, batch number), so the kept set does not depend
    on which batches an earlier, interrupted run already finished."""
    return (int(seed) * 1_000_003 + batch * 7919 + 17) % (2**63 - 1)


def read_valid_rows(path: str | os.PathLike[str], on_error: str = "fail",
                    on_reject: Callable[[int, list[Any], Any], None] | None = None) -> list[dict[str, Any] | None]:
    """Every row of a verl-format RL parquet, in input order. With `on_error="fail"` the first bad row
    raises DataValidationError (index, field); with `"skip"` a bad row is None in its place. A file
    without rows raises DataInputError."""
    from slca.data.io import check_readable, read_rows
    from slca.data.schemas import Validator

    if check_readable(path) != "parquet":
        raise DataInputError(f"{path}: curation reads verl-format RL parquet (.parquet); convert it first")
    out: list[dict[str, Any] | None] = []

    def reject(index: int, errors: list[Any], row: Any) -> None:
        out.append(None)  # the validator is lazy: a reject lands here in its input position
        if on_reject is not None:
            on_reject(index, errors, row)

    for row in Validator("rl", on_error, on_reject=reject)(read_rows(path, allow_empty=False)):
        out.append(row)
    return out


def settings_key(spec: Spec, policy: PolicySource) -> str:
    """What every outcome depends on besides the batch itself: the policy and the training
    rollout, simulator and reward settings."""
    cfg = spec.train.curate
    return digest(policy.identity, cfg.rollouts, spec.train.rl.model_dump(mode="json"),
                  spec.simulator.model_dump(mode="json"), spec.reward.model_dump(mode="json"))


class _Roller:
    """Rolls batches out with the training rollout loop; loads the policy on first use."""

    def __init__(self, spec: Spec, policy: PolicySource) -> None:
        self.spec = spec
        self.policy = policy
        self.loaded: tuple[Any, Any] | None = None
        self.simulator: Any = None
        self.reward: Any = None
        self.generator_calls = 0

    def outcomes(self, rows: Sequence[Mapping[str, Any]], seed: int) -> list[Any]:
        """Per row: the number of successful rollouts, or why it could not be rolled out."""
        from slca.rewards import RewardFunction
        from slca.rollout import RolloutConfig, run_rollouts
        from slca.rollout.protocol import protocol_prompt_fn
        from slca.sim import build_simulator

        if self.loaded is None:
            self.loaded = self.policy.load()
            self.simulator = build_simulator(self.spec.simulator)
            self.reward = RewardFunction(self.spec.reward)
        generator, tokenizer = self.loaded
        rl = self.spec.train.rl
        batch = run_rollouts(rows, n=self.spec.train.curate.rollouts, generator=generator, simulator=self.simulator,
                             tokenizer=tokenizer, cfg=RolloutConfig.from_rl(rl), seed=seed,
                             prompt_fn=protocol_prompt_fn(system_prompt=rl.system_prompt))
        self.generator_calls += batch.stats.generator_calls
        out: list[Any] = [0] * len(rows)
        for i in batch.stats.overlong_rows:
            out[i] = NO_ROLLOUT[0]
        for i, _field, _reason in batch.stats.bad_rows:
            out[i] = NO_ROLLOUT[1]
        trajectories = list(batch)
        if trajectories:
            records = self.reward.records([t.solution_text for t in trajectories],
                                          [rows[t.row_index]["reward_model"]["ground_truth"] for t in trajectories],
                                          [rows[t.row_index].get("extra_info") for t in trajectories])
            for t, record in zip(trajectories, records):
                out[t.row_index] += int(record.success)
        return out


NO_ROLLOUT = ("prompt_too_long", "unrenderable")


def _usable(outcomes: list[Any] | None, n_rows: int, rollouts: int) -> bool:
    """A cached batch is reused only when every outcome is one curation itself could have written
    (a hand-edited or foreign cache line is redone, never trusted)."""
    if outcomes is None or len(outcomes) != n_rows:
        return False
    return all(o in NO_ROLLOUT if isinstance(o, str) else type(o) is int and 0 <= o <= rollouts for o in outcomes)


def curate_rows(rows: Sequence[Mapping[str, Any] | None], spec: Spec, policy: PolicySource, cache: OutcomeCache, *,
                progress: bool = True, on_batch: Callable[[int], None] | None = None) -> tuple[list[bool], CurateFunnel]:
    """(keep flag per row, funnel) for validated RL rows (None: a row rejected by validation, dropped
    as `invalid_row`); see the module docstring."""
    from slca.terminal import progress_bar

    cfg = spec.train.curate
    keep_rule = KEEP_MODES.get(cfg.keep)
    start = time.perf_counter()
    funnel = CurateFunnel(rows_in=len(rows), rollouts_per_prompt=cfg.rollouts, keep=cfg.keep)
    reasons: list[str | None] = ["invalid_row" if r is None else structural_reason(r, cfg.min_turns, cfg.max_turns, cfg.max_gold_calls)
                                 for r in rows]
    todo = [i for i, r in enumerate(reasons) if r is None]
    key = settings_key(spec, policy)
    roller = _Roller(spec, policy)
    with progress_bar(enabled=progress) as bar:
        task = bar.add_task(f"curate ({policy.label})", total=len(todo))
        for b, lo in enumerate(range(0, len(todo), cfg.batch_prompts)):
            idx = todo[lo : lo + cfg.batch_prompts]
            seed = batch_seed(spec.run.seed, b)
            batch_key = digest(key, seed, [digest(rows[i]) for i in idx])
            outcomes = cache.get(batch_key)
            if not _usable(outcomes, len(idx), cfg.rollouts):
                outcomes = roller.outcomes([rows[i] for i in idx], seed)
                cache.put(batch_key, outcomes)
            else:
                funnel.cached_batches += 1
            for i, outcome in zip(idx, outcomes):
                if isinstance(outcome, str):
                    reasons[i] = outcome
                else:
                    funnel.successes[i] = int(outcome)
                    reasons[i] = keep_rule(int(outcome), cfg.rollouts)
            bar.advance(task, len(idx))
            if on_batch is not None:
                on_batch(b)
    for reason in reasons:
        if reason is None:
            funnel.kept += 1
        else:
            funnel.dropped[reason] += 1
    funnel.rolled_out = len(funnel.successes)
    funnel.histogram = pass_rate_histogram(list(funnel.successes.values()), cfg.rollouts)
    funnel.generator_calls = roller.generator_calls
    funnel.seconds = time.perf_counter() - start
    funnel.check()
    return [r is None for r in reasons], funnel


def curate_file(in_path: str | os.PathLike[str], out_dir: str | os.PathLike[str], *, spec: Spec, policy: PolicySource,
                cache_dir: str | os.PathLike[str], progress: bool = True,
                on_batch: Callable[[int], None] | None = None, on_error: str = "fail",
                on_reject: Callable[[int, list[Any], Any], None] | None = None) -> CurateFunnel:
    """Curate `in_path` into `out_dir` (rl.parquet + funnel.json, replaced as a whole); the
    outcomes of finished batches are kept in `cache_dir` even when a later batch fails. `on_error`
    and `on_reject` are the validator's (see `read_valid_rows`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from slca.data.outputs import check_out_dir
    from slca.fileio import make_parents, remove_made
    from slca.fileio import atomic_directory, atomic_write_text

    check_out_dir(out_dir, [in_path], OWNED_FILES)
    rows = read_valid_rows(in_path, on_error, on_reject)
    try:
        table = pq.read_table(in_path)
    except (OSError, pa.ArrowException) as exc:
        raise DataInputError(f"{in_path}: not a readable parquet file: {exc}") from None
    mask, funnel = curate_rows(rows, spec, policy, OutcomeCache(cache_dir), progress=progress, on_batch=on_batch)
    made = make_parents(out_dir)
    try:
        with atomic_directory(out_dir) as out:
            pq.write_table(table.filter(pa.array(mask, type=pa.bool_())), out / OUT_NAME)
            document = {"input": str(in_path), "policy": policy.label, "seed": spec.run.seed, **funnel.as_dict()}
            atomic_write_text(out / FUNNEL_NAME, json.dumps(document, indent=2) + "\n")
    except BaseException:
        remove_made(made)
        raise
    return funnel
