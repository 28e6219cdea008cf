"""Reward registry, the run's reward object, and the verl-compatible entry points.

A run builds one `RewardFunction` from its reward config and passes it down (the local trainer, the
evaluation, curation; verl's reward workers one per process from the spec,
slca/backends/verl/reward.py): its scorer holds the row plan and the summary judge (with the judge's
cache and connection pool) for the whole run. Rows never raise: malformed model output or ground
truth gives score 0 with `error_type` (the safety net, slca.rewards.net); a bad config raises.

`compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs)` is verl's
custom-reward signature and `compute_score_batch` the batch form its batch reward manager calls;
they, and `score_records` (the same scores as typed `RewardRecord`s), build a `RewardFunction` for the
one call, from `reward_config=` (a HierRReward / ExactMatchReward or a mapping; default HierR).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Callable, Protocol, Sequence

from pydantic import TypeAdapter

from slca.config.groups.reward import REWARD_OPTIONS, HierRReward
from slca.rewards.exact_match import ExactMatch
from slca.rewards.hierr import HierR
from slca.rewards.net import check_lengths
from slca.rewards.record import RewardRecord
from slca.registry import Registry


class Scorer(Protocol):
    """One reward under one config: result rows for a batch, or for one rollout."""

    def batch(self, solution_strs: Sequence[Any], ground_truths: Sequence[Any], extra_infos: Sequence[Any]) -> list[dict[str, Any]]: ...

    def one(self, solution_str: Any, ground_truth: Any, extra_info: Any) -> dict[str, Any]: ...


REWARDS: Registry[Callable[[Any], Scorer]] = Registry("reward")
REWARDS.register("hierr")(HierR)
REWARDS.register("exact_match")(ExactMatch)


def _plain(x: Any) -> Any:
    """Mappings/sequences (e.g. OmegaConf containers) → plain dicts/lists for validation."""
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)) or (hasattr(x, "__iter__") and hasattr(x, "__getitem__") and not isinstance(x, (str, bytes))):
        return [_plain(v) for v in x]
    return x


def resolve_reward_config(cfg: Any) -> Any:
    """A typed reward config from None (default HierR), a model, or a mapping.

    An invalid mapping is a configuration error and raises pydantic's ValidationError.
    """
    if cfg is None:
        return HierRReward()
    if isinstance(cfg, REWARD_OPTIONS.models()):
        return cfg
    data = _plain(cfg)
    if isinstance(data, dict):
        data.setdefault("name", "hierr")
    return _reward_adapter().validate_python(data)


@functools.cache
def _reward_adapter() -> TypeAdapter[Any]:
    """The validator of the reward union: a constant, built on first use (validating a spec does not need it)."""
    return TypeAdapter(REWARD_OPTIONS.union())


class RewardFunction:
    """The reward of one run, built once from its config (what `reward_config=` accepts) and passed
    down to every place that scores rollouts."""

    def __init__(self, config: Any = None) -> None:
        self.config = resolve_reward_config(config)
        self._scorer = REWARDS.get(self.config.name)(self.config)

    def score(self, solution_str: Any, ground_truth: Any, extra_info: Any = None) -> dict[str, Any]:
        """The result row of one rollout."""
        return self._scorer.one(solution_str, ground_truth, extra_info)

    def score_batch(self, solution_strs: Sequence[Any], ground_truths: Sequence[Any], extra_infos: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        """The result rows of a batch; summaries are judged concurrently."""
        if extra_infos is None:
            extra_infos = [None] * len(solution_strs)
        check_lengths(solution_strs, ground_truths, extra_infos)
        return self._scorer.batch(solution_strs, ground_truths, extra_infos)

    def records(
        self,
        solution_strs: Sequence[Any],
        ground_truths: Sequence[Any],
        extra_infos: Sequence[Any] | None = None,
        *,
        last_turn_is_tool_call: Sequence[bool] | None = None,
    ) -> list[RewardRecord]:
        """`score_batch` as typed records; `last_turn_is_tool_call` (one flag per rollout, from the
        rollout) fills the record field the reward cannot know."""
        rows = self.score_batch(solution_strs, ground_truths, extra_infos)
        if last_turn_is_tool_call is None:
            return [RewardRecord.from_row(r) for r in rows]
        if len(last_turn_is_tool_call) != len(rows):
            raise ValueError(f"{len(last_turn_is_tool_call)} last-turn flags for {len(rows)} rollouts")
        return [RewardRecord.from_row(r, last_turn_is_tool_call=bool(f)) for r, f in zip(rows, last_turn_is_tool_call)]


def compute_score(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Score one rollout (verl's custom reward signature); see the module docstring."""
    return RewardFunction(kwargs.get("reward_config")).score(solution_str, ground_truth, extra_info)


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[Any],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """Score a batch (verl's batch reward manager signature); summaries are judged concurrently."""
    return RewardFunction(kwargs.get("reward_config")).score_batch(solution_strs, ground_truths, extra_infos)


def score_records(
    solution_strs: Sequence[Any],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    *,
    reward_config: Any = None,
    last_turn_is_tool_call: Sequence[bool] | None = None,
) -> list[RewardRecord]:
    """`RewardFunction.records` for one call."""
    return RewardFunction(reward_config).records(solution_strs, ground_truths, extra_infos, last_turn_is_tool_call=last_turn_is_tool_call)
