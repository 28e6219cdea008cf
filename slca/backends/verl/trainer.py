"""slca's verl trainer (`trainer.v1.trainer_mode=slca`): verl's synchronous PPO trainer with the
advantage step handing slca's per-rollout reward record to the estimator.

verl's own advantage step reads a fixed list of tensor fields and forwards no reward extras to
registered estimators; here the reward rows (process score, summary score, no-call flag, ...)
are fetched from the batch's `extra_fields`, turned into a `RewardBatch` by
`RewardBatch.from_columns`, and the estimator named by the spec is called with the spec's own
config, bound to this trainer (docs/method.md#slca-grpo). On the CPU platform the training
workers also open their process group on gloo alone (verl's default pairs gloo with the
device's backend, which on CPU names the CPU twice).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import ray
import torch
import transfer_queue as tq
from tensordict import TensorDict
from verl.trainer.ppo.v1.trainer_base import register_trainer
from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync
from verl.workers.utils.padding import response_to_nested
from verl.utils.distributed import initialize_global_process_group_ray
from verl.workers.engine_workers import ActorRolloutRefWorker, TrainingWorker

from slca.backends.verl.estimators import segment_advantages

NAME = "slca"


class GlooTrainingWorker(TrainingWorker):
    """verl's training worker with its process group on gloo only (the CPU platform)."""

    def __init__(self, config: Any) -> None:
        initialize_global_process_group_ray(timeout_second=None, backend="gloo")
        super().__init__(config)


class GlooActorRolloutRefWorker(ActorRolloutRefWorker):
    actor_worker_cls = GlooTrainingWorker
    ref_worker_cls = GlooTrainingWorker


def reward_columns(extra_fields: list[Any]) -> dict[str, np.ndarray]:
    """Per-rollout reward extras (verl's `extra_fields[i]["reward_extra_info"]`) as columns; a
    rollout without a key reads None there."""
    rows = [(f.get("reward_extra_info") or {}) if isinstance(f, dict) else {} for f in extra_fields]
    keys = sorted({k for row in rows for k in row})
    return {k: np.array([row.get(k) for row in rows], dtype=object) for k in keys}


@register_trainer(NAME)
class SlcaTrainer(PPOTrainerSync):
    """PPOTrainerSync + slca's estimator call with the reward record."""

    def __init__(self, config: Any) -> None:
        from slca.config.io import load_spec

        self.spec = load_spec(config.slca.spec_path)
        super().__init__(config)

    def _init_resource_pool_mgr(self) -> Any:
        result = super()._init_resource_pool_mgr()
        if self.config.trainer.device == "cpu":
            for role, cls in list(self.role_worker_mapping.items()):
                if getattr(cls, "__ray_actor_class__", None) is ActorRolloutRefWorker:
                    self.role_worker_mapping[role] = ray.remote(GlooActorRolloutRefWorker)
        return result

    def _compute_advantage(self, batch: Any, metrics: dict) -> Any:
        fields = ["uid", "response_mask", "rm_scores", "extra_fields"]
        data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=fields)
        nested_mask = data["response_mask"]
        extra = data.pop("extra_fields")
        uids = [str(u) for u in data.pop("uid").tolist()]
        padded = data.to_padded_tensor()
        response_mask = padded["response_mask"].float()
        scores = padded["rm_scores"].float()
        columns = reward_columns(extra.tolist() if hasattr(extra, "tolist") else list(extra))
        advantages, returns, extras = segment_advantages(self.spec.estimator, scores, response_mask, uids, columns)
        metrics.update(segment_metrics(advantages, response_mask, extras, uids, columns))
        output = TensorDict(
            {"advantages": response_to_nested(advantages, nested_mask), "returns": response_to_nested(returns, nested_mask)},
            batch_size=len(batch),
        )
        return tq.kv_batch_put(keys=batch.keys, partition_id=batch.partition_id, fields=output)


def segment_metrics(advantages: torch.Tensor, response_mask: torch.Tensor, extras: dict[str, Any], uids: list[str], columns: dict[str, Any]) -> dict[str, float]:
    """slca's per-step metrics beside verl's: per-segment advantages and the share of groups whose
    rewards do not vary (they teach nothing)."""
    out: dict[str, float] = {}
    for key in ("adv_process", "adv_summary"):
        value = extras.get(key)
        if isinstance(value, torch.Tensor) and value.numel():
            out[f"slca/{key}_mean"] = float(value.float().mean())
            out[f"slca/{key}_abs_mean"] = float(value.float().abs().mean())
    score = columns.get("score")
    if score is not None:
        groups: dict[str, list[float]] = {}
        for uid, s in zip(uids, score):
            groups.setdefault(uid, []).append(float(s or 0.0))
        flat = sum(1 for v in groups.values() if max(v) == min(v))
        out["slca/zero_variance_group_frac"] = flat / max(1, len(groups))
    out["slca/adv_abs_mean"] = float((advantages.abs() * response_mask).sum() / response_mask.sum().clamp(min=1))
    return out
