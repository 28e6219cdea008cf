"""Register slca's estimators into verl's advantage-estimator registry (verl 0.9.1).

Called by slca's verl plugin (never at `import slca`; importing verl's core_algos costs seconds).
verl calls a registered estimator as `fn(token_level_rewards=..., response_mask=..., config=
<verl AlgoConfig>, index=<uid object array>, [reward_baselines=...], ...)`; each adapter here
accepts those keywords, turns the reward columns of `non_tensor_batch` (verl's column names are
the wire format, plain or under the reference's `reward/tool_call/` prefix) into a typed
`RewardBatch` in one place (`RewardBatch.from_columns`), reads token_level_scores from `batch`
when the caller passes them, and calls the slca estimator with its default config (verl hands its
own AlgoConfig). slca's trainer does not go through these adapters: it calls
`segment_advantages` with the config of its own spec, so nothing is shared between runs.

verl's own `grpo` and `rloo` keep their names (verl special-cases `grpo` and its semantics differ:
singleton groups); ours are registered as `grpo_slca` and `rloo_slca` (see `verl_name`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from slca.algos.misattribution import measure_misattribution
from slca.algos.registry import get_estimator, list_estimators
from slca.backends.verl.compose import verl_estimator_name
from slca.config.base import SlcaModel
from slca.rewards.record import RewardBatch

verl_name = verl_estimator_name


# Cached: verl's registry is process-wide, and registering twice must find the very same function there.
@functools.cache
def _adapter(name: str) -> Any:
    fn = get_estimator(name)

    def adapter(
        token_level_rewards: Any,
        response_mask: Any,
        index: Any = None,
        config: Any = None,
        *,
        segment_rewards: RewardBatch | Mapping[str, Any] | None = None,
        token_level_scores: Any = None,
        non_tensor_batch: Mapping[str, Any] | None = None,
        batch: Any = None,
        **_verl_extras: Any,  # reward_baselines etc.: not used by these estimators
    ) -> Any:
        if index is None:
            raise ValueError(f"{name}: verl passed no `index` (uid); group estimators need it")
        # verl hands its own AlgoConfig; an slca config is used only when one is passed.
        slca_config = config if isinstance(config, SlcaModel) else None
        if segment_rewards is None:
            segment_rewards = RewardBatch.from_columns(non_tensor_batch, response_mask.shape[0])
        if token_level_scores is None and batch is not None and "token_level_scores" in batch:
            token_level_scores = batch["token_level_scores"]
        return fn(
            token_level_rewards,
            response_mask,
            index,
            segment_rewards=segment_rewards,
            config=slca_config,
            token_level_scores=token_level_scores,
        )

    adapter.__name__ = f"slca_{name}_for_verl"
    adapter.__qualname__ = adapter.__name__
    adapter.__doc__ = f"verl-signature adapter for slca estimator {name!r}.\n\n{fn.__doc__ or ''}"
    adapter.__wrapped__ = fn  # type: ignore[attr-defined]
    return adapter


def register_into_verl() -> list[str]:
    """Register every slca estimator into verl's registry; returns the verl names used.
    Idempotent: calling again never raises for names it registered before."""
    from verl.trainer.ppo import core_algos

    names = []
    for name in list_estimators():
        target = verl_name(name)
        adapter = _adapter(name)
        existing = core_algos.ADV_ESTIMATOR_REGISTRY.get(target)
        if existing is not None and existing is not adapter:
            raise ValueError(f"verl already has an estimator named {target!r} ({existing!r}); not overriding it")
        if existing is None:
            core_algos.register_adv_est(target)(adapter)
        names.append(target)
    return names


def segment_advantages(
    estimator_config: SlcaModel,
    token_level_scores: Any,
    response_mask: Any,
    index: Sequence[Any],
    columns: Mapping[str, Any],
) -> tuple[Any, Any, dict[str, Any]]:
    """(advantages, returns, diagnostics) of the spec's estimator on one verl batch: the reward
    columns become a typed `RewardBatch` in this module only, and the estimator runs with the
    config the caller holds (the trainer binds its spec's), as the local trainer calls it."""
    segment_rewards = RewardBatch.from_columns(columns, response_mask.shape[0])
    extras: dict[str, Any] = {}
    advantages, returns = get_estimator(estimator_config.name)(
        token_level_scores,
        response_mask,
        list(index),
        segment_rewards=segment_rewards,
        config=estimator_config,
        token_level_scores=token_level_scores,
        extras=extras,
    )
    return advantages, returns, extras


def misattribution_metrics(advantages: Any, response_mask: Any, index: Sequence[Any], columns: Mapping[str, Any]) -> dict[str, float]:
    """The `credit/*` metrics of one verl batch (docs/method.md#credit-misattribution), under the
    names the local trainer logs: any estimator's advantages [B, T] judged against the reward
    columns' raw process and summary scores, and the rollout's last-turn flags when slca's tool
    agent loop set them."""
    rewards = RewardBatch.from_columns(columns, response_mask.shape[0])
    credit = measure_misattribution(
        advantages, response_mask, list(index), rewards.need("process", "credit misattribution"),
        rewards.need("summary", "credit misattribution"), rewards.last_turn_is_tool_call,
    )
    return credit.metrics()
