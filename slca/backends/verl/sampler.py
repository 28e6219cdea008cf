"""slca's verl replay buffer (`trainer.v1.sampler.custom_sampler` names it): verl's synchronous
`ReplayBuffer` that, once a step's groups are chosen, keeps m of each group's n rollouts with slca's
own down-sampler (the function the local trainer calls, through the same registry:
docs/method.md#max-variance-down-sampling) and hands every rollout's reward to slca's trainer for
the pre-rollout filter (docs/method.md#pre-rollout-filter) before anything is dropped.

verl stores each trajectory under `{uid}_{session}_{output}`: the uid is the prompt's group, the
session one of its n rollouts (a multi-turn rollout may store several outputs; they share one
reward). Down-sampling chooses sessions and keeps all their outputs; the rollouts it drops are
cleared from TransferQueue at once, so the update, old log-probs and metrics see only the kept ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import transfer_queue as tq
from transfer_queue import KVBatchMeta
from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer

from slca.algos.downsample import downsample_from_config
from slca.backends.verl.trainer import plain_list, reward_columns
from slca.rewards.record import RewardBatch

TRAIN = "train"


def session_of(key: str) -> tuple[str, int]:
    """(prompt uid, rollout session) of a verl trajectory key `{uid}_{session}_{output}`."""
    uid, session, _output = key.rsplit("_", 2)
    return uid, int(session)


@dataclass(frozen=True)
class Rollouts:
    """A step's trajectories folded into rollouts: one per (uid, session), in (uid, session) order
    within each group, groups in order of first appearance."""

    sessions: list[tuple[str, int]]
    first_row: list[int]  # the row holding each rollout's reward
    rows: list[list[int]]  # every row of each rollout

    @classmethod
    def from_keys(cls, keys: list[str]) -> Rollouts:
        rows_of: dict[tuple[str, int], list[int]] = {}
        for row, key in enumerate(keys):
            rows_of.setdefault(session_of(key), []).append(row)
        group_rank = {uid: rank for rank, uid in enumerate(dict.fromkeys(uid for uid, _ in rows_of))}
        sessions = sorted(rows_of, key=lambda s: (group_rank[s[0]], s[1]))
        return cls(sessions, [rows_of[s][0] for s in sessions], [rows_of[s] for s in sessions])

    @property
    def groups(self) -> list[str]:
        return [uid for uid, _ in self.sessions]


def keep_rollouts(config: Any, keys: list[str], rewards: RewardBatch) -> tuple[list[int], dict[str, float]]:
    """Rows of `keys` to update on (ascending) and what was kept: m rollouts of each group by the
    down-sampler of `config` (a `downsample` option with m resolved). `rewards` holds one row per key."""
    folded = Rollouts.from_keys(keys)
    per_rollout = rewards.select(torch.tensor(folded.first_row, dtype=torch.long))
    kept = downsample_from_config(config, per_rollout, folded.groups).tolist()
    rows = sorted(row for i in kept for row in folded.rows[i])
    counts: dict[str, int] = {}
    for i in kept:
        counts[folded.groups[i]] = counts.get(folded.groups[i], 0) + 1
    flat = _zero_variance_groups(per_rollout.score, folded.groups) if per_rollout.score is not None else 0
    n_groups = len(dict.fromkeys(folded.groups))
    stats = {
        "slca/downsample/groups": float(n_groups),
        "slca/downsample/rollouts": float(len(folded.sessions)),
        "slca/downsample/rollouts_kept": float(len(kept)),
        "slca/downsample/min_kept_per_group": float(min(counts.values(), default=0)),
        "slca/downsample/max_kept_per_group": float(max(counts.values(), default=0)),
        "slca/downsample/zero_variance_group_frac": flat / max(1, n_groups),
    }
    return rows, stats


def _zero_variance_groups(score: torch.Tensor, groups: list[str]) -> int:
    by_group: dict[str, list[float]] = {}
    for uid, value in zip(groups, score.tolist()):
        by_group.setdefault(uid, []).append(value)
    return sum(max(v) == min(v) for v in by_group.values())


class SlcaReplayBuffer(ReplayBuffer):
    """verl's sync replay buffer + slca's m-of-n down-sampling and reward hand-off (module docstring).

    `sampler_kwargs`: `spec_path` (the run's spec: down-sampler and n), and `filter_groups_metric`
    when the spec's filter is dynamic sampling (verl gives its DAPO settings to its own buffer only).
    """

    def __init__(self, **kwargs: Any) -> None:
        from slca.backends.verl.run_spec import run_spec

        options = kwargs["sampler_kwargs"] or {}
        spec = run_spec(str(options["spec_path"]))
        metric = options.get("filter_groups_metric")
        if metric:
            # As verl sets up its own buffer for DAPO: refills fetch single prompts, one batch in flight.
            kwargs.update(filter_groups_metric=metric, train_batch_size=spec.train.rl.prompts_per_step, gen_batch_size=1, max_inflight_gen_batches=1)
        super().__init__(**kwargs)
        self.downsample = spec.downsample
        self._observed: list[tuple[list[Any], list[float]]] = []
        self._step_metrics: dict[str, float] = {}

    def take_observations(self) -> list[tuple[list[Any], list[float]]]:
        """(prompt id per rollout, normalised reward per rollout) of every batch chosen since the
        last call, all n rollouts of each group (what the pre-rollout filter observes)."""
        observed, self._observed = self._observed, []
        return observed

    def _materialize_batch(self, partition_id: str, selected_prompt_uids: list[str], partition_snapshot: dict[str, dict]) -> KVBatchMeta:
        batch = super()._materialize_batch(partition_id, selected_prompt_uids, partition_snapshot)
        if partition_id != TRAIN or not batch.keys:
            return batch
        data = tq.kv_batch_get(keys=batch.keys, partition_id=partition_id, select_fields=["index", "extra_fields"])
        columns = reward_columns(plain_list(data["extra_fields"]))
        rewards = RewardBatch.from_columns(columns, len(batch.keys))
        folded = Rollouts.from_keys(batch.keys)
        index = plain_list(data["index"])
        normalised = rewards.normalised if rewards.normalised is not None else rewards.need("score", "the pre-rollout filter")
        self._observed.append(([index[r] for r in folded.first_row], [float(normalised[r]) for r in folded.first_row]))
        rows, self._step_metrics = keep_rollouts(self.downsample, batch.keys, rewards)
        kept = set(rows)
        dropped = [key for row, key in enumerate(batch.keys) if row not in kept]
        if dropped:
            tq.kv_clear(partition_id=partition_id, keys=dropped)
        return KVBatchMeta(partition_id=partition_id, keys=[batch.keys[r] for r in rows], tags=[batch.tags[r] for r in rows])

    def sample(self, global_steps: int, partition_id: str, batch_size: int) -> tuple[KVBatchMeta, dict]:
        batch, metrics = super().sample(global_steps, partition_id, batch_size)
        if partition_id == TRAIN:
            metrics.update(self._step_metrics)
            self._step_metrics = {}
        return batch, metrics

