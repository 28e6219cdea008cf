"""The embedded RL loop: rollouts with the tool simulator, rewards, advantages from the estimator
registry, pre-rollout filtering, down-sampling and the clipped PPO update, with resumable state.

One step: take `prompts_per_step` admitted prompts, roll each out `n` times, score every rollout,
update the filter, keep m of n rollouts per prompt, compute advantages on the kept subset, and
update the policy in mini-batches of prompts (docs/method.md#training-loop for the update; efficiency paper eq. 4-6 for
the filter; PODS for the down-sampling).
"""

from __future__ import annotations

import copy
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from slca.algos.downsample import downsample_from_config
from slca.algos.filters import build_filters
from slca.algos.misattribution import measure_misattribution
from slca.algos.registry import get_estimator
from slca.backends.local.checkpoint import capture_rng_states, load_latest_checkpoint, restore_rng_states, save_checkpoint
from slca.backends.local.losses import aggregate, kl_penalty, ppo_policy_loss
from slca.backends.local.policy import batched_response_logprobs, response_logprobs, select_rows
from slca.config.spec import Spec
from slca.rewards import RewardBatch, RewardFunction, RewardRecord
from slca.rewards.metrics import success_threshold
from slca.rewards.net import INTERNAL_ERROR
from slca.rollout import collate
from slca.rollout.types import KIND_THINKING, KIND_TOOL_CALL
from slca.toolcall.segments import split_segments


@dataclass
class RlProgress:
    """Where the loop stands; saved in every checkpoint so a restart continues exactly."""

    step: int = 0
    epoch: int = 0
    position: int = 0
    admitted: list[int] = field(default_factory=list)
    epoch_started: bool = False


@dataclass
class Generation:
    """Scored rollouts of one or more generation rounds: one reward record per trajectory;
    `index` is each rollout's prompt id."""

    trajectories: list[Any]
    records: list[RewardRecord]
    index: list[int]
    rollout_metrics: dict[str, float] = field(default_factory=dict)

    def rewards(self) -> RewardBatch:
        """The records as [N] tensors."""
        return RewardBatch.from_records(self.records)

    def subset(self, rows: list[int]) -> Generation:
        return Generation([self.trajectories[i] for i in rows], [self.records[i] for i in rows], [self.index[i] for i in rows], self.rollout_metrics)

    @staticmethod
    def concat(parts: list[Generation]) -> Generation:
        """All parts in order; rollout counters are summed over rounds."""
        merged = Generation([], [], [])
        for part in parts:
            merged.trajectories += part.trajectories
            merged.records += part.records
            merged.index += part.index
            for k, v in part.rollout_metrics.items():
                # Counters add up over rounds; means, maxima and fractions keep the last round's value.
                summed = not k.endswith(("_mean", "_max", "_frac"))
                merged.rollout_metrics[k] = merged.rollout_metrics.get(k, 0.0) + v if summed else v
        return merged


class LocalRlTrainer:
    """Runs `spec.train.rl` on `rows` (verl-native RL rows) with `model`; see the module docstring."""

    def __init__(
        self,
        spec: Spec,
        model: Any,
        tokenizer: Any,
        rows: list[dict[str, Any]],
        out_dir: Path,
        *,
        rollout_fn: Callable[..., Any],
        device: torch.device,
        log: Callable[[dict[str, Any], int], None],
    ) -> None:
        self.spec = spec
        self.cfg = spec.train.rl
        self.model = model
        self.tokenizer = tokenizer
        self.rows = rows
        self.out_dir = Path(out_dir)
        self.rollout_fn = rollout_fn
        self.device = device
        self.log = log
        self.estimator = get_estimator(spec.estimator.name)
        self.reward = RewardFunction(spec.reward)
        self.threshold = success_threshold(spec.reward)
        self.filters = build_filters(spec.filter, self.threshold)
        self.filter = self.filters.prompt_filter
        self.downsample_cfg = spec.downsample
        self.ref_model = None
        if self.cfg.use_kl_loss and self.cfg.kl_coef > 0:
            self.ref_model = copy.deepcopy(model).eval()
            self.ref_model.requires_grad_(False)
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=self.cfg.lr, weight_decay=self.cfg.weight_decay)
        self.progress = RlProgress()
        self.exhausted = False
        self._drawn_epoch: dict[int, int] = {}  # prompt id -> epoch it was last drawn in (outcome log)

    def total_steps(self) -> int:
        per_epoch = max(1, len(self.rows) // self.cfg.prompts_per_step)
        steps = per_epoch * self.cfg.epochs
        return min(steps, self.cfg.max_steps) if self.cfg.max_steps else steps

    # ----------------------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        return {"progress": asdict(self.progress), "filter": self.filter.state_dict() if self.filter else None}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.progress = RlProgress(**state["progress"])
        if self.filter is not None and state.get("filter") is not None:
            self.filter.load_state_dict(state["filter"])

    def save(self) -> None:
        save_checkpoint(
            self.out_dir / "checkpoints",
            model=self.model,
            optimizer=self.optimizer,
            scheduler=None,
            rng_states=capture_rng_states(),
            extra_state=self.state_dict(),
            step=self.progress.step,
        )

    def try_resume(self) -> bool:
        """Restore the newest checkpoint in out_dir, if any (weights, optimiser, RNG, loop state)."""
        ckpt = load_latest_checkpoint(self.out_dir / "checkpoints")
        if ckpt is None:
            return False
        ckpt.load_model(self.model)
        if ckpt.optimizer is not None:
            self.optimizer.load_state_dict(ckpt.optimizer)
        restore_rng_states(ckpt.rng_states)
        self.load_state_dict(ckpt.extra_state)
        return True

    # ----------------------------------------------------------------------------- prompts
    def _next_prompts(self) -> list[int]:
        """The next `prompts_per_step` admitted prompt ids, starting a new epoch when needed."""
        p = self.progress
        batch: list[int] = []
        empty_epochs = 0
        # A filter without re-admission that skips everything never changes its mind.
        patience = 1 + (self.spec.filter.readmit_every or 0) if self.filter is not None else 1
        while len(batch) < self.cfg.prompts_per_step:
            if not p.epoch_started or p.position >= len(p.admitted):
                if p.epoch_started:
                    self._end_epoch()
                order = list(range(len(self.rows)))
                random.Random(self.spec.run.seed * 1_000_003 + p.epoch).shuffle(order)
                p.admitted = self.filter.admit(order) if self.filter else order
                p.position = 0
                p.epoch_started = True
                if not p.admitted:
                    empty_epochs += 1
                    if empty_epochs > patience:
                        return batch
                    continue
            take = p.admitted[p.position : p.position + self.cfg.prompts_per_step - len(batch)]
            p.position += len(take)
            batch.extend(take)
            self._drawn_epoch.update((pid, p.epoch) for pid in take)
        return batch

    def _end_epoch(self) -> None:
        if self.filter is not None:
            metrics = self.filter.end_epoch()
            self.log({f"filter/{k}": v for k, v in metrics.items()}, self.progress.step)
        self.progress.epoch += 1

    # ----------------------------------------------------------------------------- one step
    def _generate(self, prompt_ids: list[int], seed: int) -> Generation:
        """Roll out `prompt_ids` n times each and score every rollout into a reward record
        (the rollout adds whether its last assistant turn is a tool call)."""
        batch_rows = [self.rows[i] for i in prompt_ids]
        rollout = self.rollout_fn(batch_rows, n=self.cfg.n, seed=seed)
        trajectories = list(rollout.trajectories)
        source_rows = [batch_rows[t.row_index] for t in trajectories]
        records = self.reward.records(
            [t.solution_text for t in trajectories],
            [r["reward_model"]["ground_truth"] for r in source_rows],
            [r.get("extra_info") for r in source_rows],
            last_turn_is_tool_call=[bool(t.last_turn_is_tool_call) for t in trajectories],
        ) if trajectories else []
        return Generation(
            trajectories=trajectories,
            records=records,
            index=[prompt_ids[t.row_index] for t in trajectories],
            rollout_metrics=rollout.stats.as_metrics(),
        )

    def step(self) -> dict[str, Any]:
        """One RL step; sets `exhausted` instead when the filter has left no prompt to train on."""
        cfg = self.cfg
        t0 = time.perf_counter()
        filler = self.filters.new_filler(cfg.prompts_per_step) if self.filters.new_filler is not None else None
        parts: list[Generation] = []
        outcomes: list[list[int]] = []
        round_index = 0
        while True:
            prompt_ids = self._next_prompts()
            if not prompt_ids:
                self.exhausted = True
                break
            gen = self._generate(prompt_ids, seed=(self.spec.run.seed * 7919 + self.progress.step) * 64 + round_index)
            round_index += 1
            if self.filter is not None and gen.trajectories:
                self.filter.observe(gen.index, gen.rewards().normalised)
            if gen.trajectories:
                outcomes += self._prompt_outcomes(gen)
            parts.append(gen)
            if filler is None or not gen.trajectories:
                break
            parts[-1] = gen.subset(filler.add(gen.rewards().score, gen.index).tolist())
            if filler.exhausted:
                break
        generated = Generation.concat(parts)
        t_rollout = time.perf_counter() - t0
        if not generated.trajectories:
            if not self.exhausted:
                self.progress.step += 1  # every prompt was overlong or unreadable: reported in the metrics
            return {**generated.rollout_metrics, "rollouts_kept": 0, "time/rollout_s": t_rollout}

        rewards = generated.rewards()
        kept = self._select(rewards, generated.index)
        metrics = self._rollout_metrics(generated, rewards)
        if filler is not None:
            metrics.update({f"dynamic_sampling/{k}": float(v) for k, v in filler.stats().items()})
        metrics["rollouts_kept"] = int(kept.numel())
        metrics["prompts/all_correct"] = outcomes
        t_reward = time.perf_counter() - t0 - t_rollout
        if kept.numel() > 0:
            chosen = generated.subset(kept.tolist())
            metrics.update(self._update(chosen.trajectories, rewards.select(kept), chosen.index))
        t_update = time.perf_counter() - t0 - t_rollout - t_reward
        self.progress.step += 1
        metrics.update({"time/rollout_s": t_rollout, "time/reward_s": t_reward, "time/update_s": t_update, "epoch": self.progress.epoch})
        return metrics

    def _prompt_outcomes(self, gen: Generation) -> list[list[int]]:
        """[epoch, prompt id, 1 if all its rollouts succeeded else 0] per prompt of one generation
        round, before any down-sampling or dynamic-sampling drop: the per-prompt record the
        all-correct stability analysis (efficiency paper Fig. 5) is computed from by `slca report`."""
        success: dict[int, bool] = {}
        for pid, ok in zip(gen.index, (gen.rewards().normalised >= self.threshold).tolist()):
            success[pid] = success.get(pid, True) and bool(ok)
        return [[self._drawn_epoch.get(pid, self.progress.epoch), pid, int(ok)] for pid, ok in success.items()]

    def _select(self, rewards: RewardBatch, index: list[int]) -> torch.Tensor:
        """Rows to update on: the down-sampler of the config (through its registry) keeps m
        of the n rollouts of each prompt."""
        if not index:
            return torch.arange(0)
        return downsample_from_config(self.downsample_cfg, rewards, index)

    def _rollout_metrics(self, generated: Generation, rewards: RewardBatch) -> dict[str, Any]:
        norm = rewards.normalised
        # Informative = the reward the estimator sees (score) differs within the group.
        by_group: dict[Any, list[float]] = {}
        for g, value in zip(generated.index, rewards.score.tolist()):
            by_group.setdefault(g, []).append(value)
        zero_var = sum(max(v) == min(v) for v in by_group.values()) / len(by_group)
        out: dict[str, Any] = {
            "reward/score_mean": rewards.score.mean().item(),
            "reward/process_mean": rewards.process.mean().item(),
            "reward/summary_mean": rewards.summary.mean().item(),
            "reward/norm_mean": norm.mean().item(),
            "reward/success_rate": (norm >= self.threshold).float().mean().item(),
            "reward/no_call_rate": rewards.no_call.float().mean().item(),
            "groups/zero_variance_frac": zero_var,
            "groups/informative_frac": 1.0 - zero_var,
        }
        records = generated.records
        for key in ("format_score", "name_f1", "arg_match", "parallel_score"):
            out[f"reward/{key}_mean"] = sum(float(r.components.get(key, 0.0)) for r in records) / len(records)
        # Rows the rewards' safety net had to catch: a bug to report, not a model failure.
        out["reward/internal_error_rate"] = sum(r.error_type.startswith(INTERNAL_ERROR) for r in records) / len(records)
        out.update(generated.rollout_metrics)
        return out

    def _update(self, trajectories: list[Any], rewards: RewardBatch, index: list[int]) -> dict[str, Any]:
        cfg = self.cfg
        batch = {k: (v.to(self.device) if isinstance(v, torch.Tensor) else v) for k, v in collate(trajectories, pad_id=self.tokenizer.pad_token_id).items()}
        response_mask = batch["response_mask"]
        micro = max(1, cfg.n)
        self.model.eval()
        old_logp = batched_response_logprobs(self.model, batch, micro, temperature=cfg.temperature)
        ref_logp = batched_response_logprobs(self.ref_model, batch, micro, temperature=cfg.temperature) if self.ref_model is not None else None

        token_rewards = torch.zeros_like(response_mask)
        last = (response_mask.cumsum(-1) * response_mask).argmax(-1)  # last policy token of each row
        rewards = rewards.to(self.device)
        token_rewards[torch.arange(len(trajectories)), last] = rewards.score
        # The records carry last_turn_is_tool_call, which final_tool_turn="process" needs.
        advantages, _ = self.estimator(token_rewards, response_mask, index, segment_rewards=rewards, config=self.spec.estimator)
        process_mask, summary_mask, _, _ = split_segments(
            response_mask,
            last_run_is_tool_call=rewards.last_turn_is_tool_call,
            final_tool_turn=getattr(self.spec.estimator, "final_tool_turn", "summary"),
        )
        process_mask, summary_mask = process_mask.float(), summary_mask.float()
        metrics: dict[str, Any] = {
            "adv/tool_mean": _masked_mean(advantages, process_mask),
            "adv/summary_mean": _masked_mean(advantages, summary_mask),
            "adv/tool_abs_mean": _masked_mean(advantages.abs(), process_mask),
            "adv/summary_abs_mean": _masked_mean(advantages.abs(), summary_mask),
        }
        credit = measure_misattribution(advantages, response_mask, index, rewards.process, rewards.summary, rewards.last_turn_is_tool_call)
        metrics.update(credit.metrics())

        self.model.train()
        groups = sorted(set(index))
        per_mb = max(1, cfg.mini_batch_prompts)
        losses, entropies = [], {"all": [], "tool": [], "summary": [], "thinking": [], "tool_call": []}
        clip_fracs, kls, grad_norms, cosines = [], [], [], []
        for _ in range(cfg.ppo_epochs):
            for start in range(0, len(groups), per_mb):
                chosen = set(groups[start : start + per_mb])
                rows = torch.tensor([i for i, g in enumerate(index) if g in chosen], device=self.device)
                if cfg.grad_cosine and start == 0:
                    cosines.append(self._grad_cosine(select_rows(batch, rows), old_logp[rows], advantages[rows], process_mask[rows], summary_mask[rows]))
                self.optimizer.zero_grad(set_to_none=True)
                logp, entropy = response_logprobs(self.model, select_rows(batch, rows), temperature=cfg.temperature, with_entropy=True)
                mask = response_mask[rows]
                loss, stats = ppo_policy_loss(
                    logp, old_logp[rows], advantages[rows], mask,
                    clip_low=cfg.clip_low, clip_high=cfg.clip_high, dual_clip=cfg.dual_clip,
                    agg_mode=cfg.loss_agg_mode, norm_length=cfg.max_response_length,
                )
                if ref_logp is not None:
                    kl = aggregate(kl_penalty(logp, ref_logp[rows], cfg.kl_type), mask, cfg.loss_agg_mode, norm_length=cfg.max_response_length)
                    loss = loss + cfg.kl_coef * kl
                    kls.append(kl.item())
                if cfg.entropy_coeff:
                    loss = loss - cfg.entropy_coeff * aggregate(entropy, mask, cfg.loss_agg_mode, norm_length=cfg.max_response_length)
                loss.backward()
                grad_norms.append(float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)))
                self.optimizer.step()
                losses.append(loss.item())
                clip_fracs.append(stats.clip_fraction)
                with torch.no_grad():
                    ent = entropy.detach()
                    entropies["all"].append(_masked_mean(ent, mask))
                    entropies["tool"].append(_masked_mean(ent, process_mask[rows]))
                    entropies["summary"].append(_masked_mean(ent, summary_mask[rows]))
                    kinds = batch["token_kinds"][rows]
                    entropies["thinking"].append(_masked_mean(ent, (kinds == KIND_THINKING).float() * mask))
                    entropies["tool_call"].append(_masked_mean(ent, (kinds == KIND_TOOL_CALL).float() * mask))
        if cosines:
            metrics["grad_cosine/tool_summary"] = sum(c[0] for c in cosines) / len(cosines)
            metrics["grad_cosine/tool_norm"] = sum(c[1] for c in cosines) / len(cosines)
            metrics["grad_cosine/summary_norm"] = sum(c[2] for c in cosines) / len(cosines)
        metrics["loss/policy"] = sum(losses) / len(losses)
        metrics["loss/clip_frac"] = sum(clip_fracs) / len(clip_fracs)
        metrics["loss/grad_norm"] = sum(grad_norms) / len(grad_norms)
        if kls:
            metrics["loss/kl"] = sum(kls) / len(kls)
        for name, values in entropies.items():
            values = [v for v in values if v == v]
            if values:
                metrics[f"entropy/{name}"] = sum(values) / len(values)
        self.model.eval()
        return metrics


    def _grad_cosine(self, batch: dict[str, Any], old_logp: torch.Tensor, advantages: torch.Tensor, tool_mask: torch.Tensor, summary_mask: torch.Tensor) -> tuple[float, float, float]:
        """Cosine between the policy gradients of the tool-segment and summary-segment losses (docs/method.md#gradient-cosine-probe):
        the same advantages, the PPO loss token-averaged over one segment's tokens at a time; the
        gradients are cleared afterwards so the real update is unaffected."""
        cfg = self.cfg
        grads = []
        for mask in (tool_mask, summary_mask):
            self.optimizer.zero_grad(set_to_none=True)
            logp, _ = response_logprobs(self.model, batch, temperature=cfg.temperature)
            loss, _ = ppo_policy_loss(logp, old_logp, advantages, mask, clip_low=cfg.clip_low, clip_high=cfg.clip_high,
                                      dual_clip=cfg.dual_clip, agg_mode="token-mean")
            loss.backward()
            grads.append(torch.cat([p.grad.flatten() for p in self.model.parameters() if p.grad is not None]))
        self.optimizer.zero_grad(set_to_none=True)
        g_tool, g_summary = grads
        norm_tool, norm_summary = float(g_tool.norm()), float(g_summary.norm())
        return float(g_tool @ g_summary) / (norm_tool * norm_summary + 1e-8), norm_tool, norm_summary


def _masked_mean(values: torch.Tensor, mask: torch.Tensor) -> float:
    denom = mask.sum()
    return float((values * mask).sum() / denom) if denom > 0 else float("nan")
