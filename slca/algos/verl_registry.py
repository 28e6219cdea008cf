"""Register slca's estimators into verl's advantage-estimator registry (verl 0.9.1).

Called by the verl backend (never at `import slca`; importing verl's core_algos costs seconds).
verl calls a registered estimator as `fn(token_level_rewards=..., response_mask=..., config=
<verl AlgoConfig>, index=<uid object array>, [reward_baselines=...], ...)`; each adapter here
accepts those keywords, reads segment rewards from `non_tensor_batch` (plain keys or the
reference's `reward/tool_call/<key>` columns) and token_level_scores from `batch` when the caller
passes them, and calls the slca estimator with the slca config bound by `register_into_verl`.

verl's own `grpo` and `rloo` keep their names (verl special-cases `grpo` and its semantics differ:
singleton groups); ours are registered as `grpo_slca` and `rloo_slca` (see `verl_name`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from slca.algos.registry import get_estimator, list_estimators
from slca.config.base import SlcaModel

SEGMENT_KEYS = (
    "process_score",
    "summary_score",
    "score",
    "should_call_but_no_call",
    "toolpo_correct_ratio",
    "last_run_is_tool_call",
)
COLUMN_PREFIXES = ("", "reward/tool_call/", "reward/")
_VERL_BUILTIN_CLASHES = {"grpo": "grpo_slca", "rloo": "rloo_slca"}

_ADAPTERS: dict[str, Any] = {}
_BOUND_CONFIGS: dict[str, Any] = {}
_LAST_EXTRAS: dict[str, dict[str, Any]] = {}


def verl_name(name: str) -> str:
    """The name under which slca estimator `name` lives in verl's registry."""
    return _VERL_BUILTIN_CLASHES.get(name, name)


def segment_rewards_from_columns(non_tensor_batch: Mapping[str, Any] | None) -> dict[str, Any]:
    """Segment rewards found in a verl non-tensor batch (first matching prefix per key)."""
    found: dict[str, Any] = {}
    if not non_tensor_batch:
        return found
    for key in SEGMENT_KEYS:
        for prefix in COLUMN_PREFIXES:
            if prefix + key in non_tensor_batch:
                found[key] = non_tensor_batch[prefix + key]
                break
    return found


def last_extras(name: str) -> dict[str, Any]:
    """Per-rollout diagnostics (adv_process, adv_summary, ...) of the latest verl call of `name`
    in this process, for the backend's metric hook; empty before any call."""
    return dict(_LAST_EXTRAS.get(name, {}))


def _adapter(name: str) -> Any:
    if name in _ADAPTERS:
        return _ADAPTERS[name]
    fn = get_estimator(name)

    def adapter(
        token_level_rewards: Any,
        response_mask: Any,
        index: Any = None,
        config: Any = None,
        *,
        segment_rewards: Mapping[str, Any] | None = None,
        token_level_scores: Any = None,
        non_tensor_batch: Mapping[str, Any] | None = None,
        batch: Any = None,
        **_verl_extras: Any,  # reward_baselines etc.: not used by these estimators
    ) -> Any:
        if index is None:
            raise ValueError(f"{name}: verl passed no `index` (uid); group estimators need it")
        # verl hands its own AlgoConfig; slca's typed config is the one bound at registration.
        slca_config = config if isinstance(config, SlcaModel) else _BOUND_CONFIGS.get(name)
        if segment_rewards is None:
            segment_rewards = segment_rewards_from_columns(non_tensor_batch) or None
        if token_level_scores is None and batch is not None and "token_level_scores" in batch:
            token_level_scores = batch["token_level_scores"]
        extras: dict[str, Any] = {}
        result = fn(
            token_level_rewards,
            response_mask,
            index,
            segment_rewards=segment_rewards,
            config=slca_config,
            token_level_scores=token_level_scores,
            extras=extras,
        )
        _LAST_EXTRAS[name] = extras
        return result

    adapter.__name__ = f"slca_{name}_for_verl"
    adapter.__qualname__ = adapter.__name__
    adapter.__doc__ = f"verl-signature adapter for slca estimator {name!r}.\n\n{fn.__doc__ or ''}"
    adapter.__wrapped__ = fn  # type: ignore[attr-defined]
    _ADAPTERS[name] = adapter
    return adapter


def register_into_verl(configs: Mapping[str, Any] | None = None) -> list[str]:
    """Register every slca estimator into verl's registry; returns the verl names used.

    configs: optional slca estimator configs by slca name (e.g. {"slca_grpo": SlcaGrpoEstimator(
    w_process=2)}), used whenever verl calls the estimator. Idempotent: calling again re-binds
    configs and never raises for names it registered before.
    """
    from verl.trainer.ppo import core_algos

    for name, cfg in (configs or {}).items():
        if name not in list_estimators():
            raise KeyError(f"no slca estimator {name!r} to bind a config to")
        _BOUND_CONFIGS[name] = cfg
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
