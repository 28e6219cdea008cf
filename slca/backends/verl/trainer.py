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

import os
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

from slca.backends.verl.estimators import misattribution_metrics, segment_advantages
from slca.rewards.record import WIRE

NAME = "slca"
# What the rollout, not the reward, knows about each rollout (docs/method.md#a-final-tool-call-turn).
ROLLOUT_FIELDS = (WIRE["last_turn_is_tool_call"],)


class GlooTrainingWorker(TrainingWorker):
    """verl's training worker with its process group on gloo only (the CPU platform)."""

    def __init__(self, config: Any) -> None:
        if int(os.environ.get("WORLD_SIZE", "1")) == 1 and not torch.distributed.is_initialized():
            # One training process needs no rendezvous: verl's MASTER_PORT was free when verl chose it, but
            # another run on the same machine can bind it before this worker does (EADDRINUSE, seen with
            # two verl runs side by side); an in-memory store has no port to lose.
            torch.distributed.init_process_group(backend="gloo", store=torch.distributed.HashStore(), rank=0, world_size=1)
        else:
            initialize_global_process_group_ray(timeout_second=None, backend="gloo")
        super().__init__(config)


class GlooActorRolloutRefWorker(ActorRolloutRefWorker):
    actor_worker_cls = GlooTrainingWorker
    ref_worker_cls = GlooTrainingWorker


def gloo_workers_on_cpu(trainer: Any) -> None:
    """On the CPU platform, swap a verl trainer's actor/rollout/ref worker for the gloo-only one
    (call after `_init_resource_pool_mgr`, which fills `role_worker_mapping`)."""
    if trainer.config.trainer.device != "cpu":
        return
    for role, cls in list(trainer.role_worker_mapping.items()):
        if getattr(cls, "__ray_actor_class__", None) is ActorRolloutRefWorker:
            trainer.role_worker_mapping[role] = ray.remote(GlooActorRolloutRefWorker)


def plain_list(value: Any) -> list[Any]:
    """A TensorDict non-tensor column (or array) as plain Python values."""
    items = value.tolist() if hasattr(value, "tolist") else list(value)
    return [getattr(item, "data", item) for item in items]


def reward_columns(extra_fields: list[Any]) -> dict[str, np.ndarray]:
    """Per-rollout reward extras (verl's `extra_fields[i]["reward_extra_info"]`) and the rollout's
    own last-turn-is-tool-call flag (set there by slca's tool agent loop) as columns; a rollout
    without a key reads None there."""
    rows = [{**(f.get("reward_extra_info") or {}), **{k: f[k] for k in ROLLOUT_FIELDS if k in f}} if isinstance(f, dict) else {} for f in extra_fields]
    keys = sorted({k for row in rows for k in row})
    return {k: np.array([row.get(k) for row in rows], dtype=object) for k in keys}


@register_trainer(NAME)
class SlcaTrainer(PPOTrainerSync):
    """PPOTrainerSync + slca's estimator call with the reward record."""

    def __init__(self, config: Any) -> None:
        from slca.backends.verl.run_spec import run_spec

        self.spec = run_spec(str(config.slca.spec_path))
        self.prompt_gate: Any = None  # the pre-rollout filter, built with the dataloader
        super().__init__(config)

    # ---- pre-rollout filter in the prompt flow (prefilter.py) and the replay buffer's hand-off (sampler.py)
    def _init_dataloader(self) -> None:
        super()._init_dataloader()
        from slca.algos.filters import build_filters
        from slca.backends.verl.prefilter import PromptGate
        from slca.rewards.metrics import success_threshold

        prompt_filter = build_filters(self.spec.filter, success_threshold(self.spec.reward)).prompt_filter
        if prompt_filter is not None:
            if not hasattr(self.replay_buffer, "take_observations"):
                # Without slca's buffer the filter would see no rewards and silently never skip.
                raise RuntimeError("filter=pre_rollout needs slca's replay buffer: trainer.v1.sampler.custom_sampler must name slca.backends.verl.sampler")
            self.prompt_gate = PromptGate(prompt_filter, len(self.train_dataset))

    def _fetch_one_gen_batch(self) -> Any:
        """The next prompt verl's dataloader yields that the filter admits (chunks of one prompt:
        efficiency.py sets `data.gen_batch_size=1` with the filter)."""
        if self.prompt_gate is None:
            return super()._fetch_one_gen_batch()
        while True:
            chunk = super()._fetch_one_gen_batch()
            ids = plain_list(chunk["index"])
            if len(ids) != 1:
                raise RuntimeError(f"the pre-rollout filter needs data.gen_batch_size=1, got chunks of {len(ids)} prompts")
            if self.prompt_gate.admit(ids[0]):
                return chunk

    def prepare_step(self) -> dict:
        metrics = super().prepare_step()
        if self.prompt_gate is not None:
            metrics = {**(metrics or {}), **self.prompt_gate.take_metrics()}
        return metrics

    def on_sample_end(self) -> None:
        super().on_sample_end()
        if self.prompt_gate is not None:
            for prompt_ids, normalised in self.replay_buffer.take_observations():
                self.prompt_gate.observe(prompt_ids, normalised)

    def _step_folder(self) -> str:
        """verl's checkpoint folder of the current step (where `_save_checkpoint` writes)."""
        return os.path.join(self.config.trainer.default_local_dir, f"global_step_{self.global_steps}")

    def _save_checkpoint(self) -> None:
        # Before verl's own save: its last act marks the folder as the latest complete checkpoint.
        if self.prompt_gate is not None:
            self.prompt_gate.save(self._step_folder())
        super()._save_checkpoint()

    def _load_checkpoint(self) -> None:
        super()._load_checkpoint()
        if self.prompt_gate is not None and self.global_steps > 0:
            resume_path = self.config.trainer.resume_mode == "resume_path"
            self.prompt_gate.load(str(self.config.trainer.resume_from_path) if resume_path else self._step_folder())

    def _init_resource_pool_mgr(self) -> Any:
        result = super()._init_resource_pool_mgr()
        gloo_workers_on_cpu(self)
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
    """slca's per-step metrics beside verl's: per-segment advantages, the share of groups whose
    rewards do not vary (they teach nothing) and credit misattribution (docs/method.md#credit-misattribution)."""
    out: dict[str, float] = misattribution_metrics(advantages, response_mask, uids, columns)
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
