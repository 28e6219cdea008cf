"""Reward registry and the verl-compatible entry points.

`compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs)` is verl's
custom-reward signature; `compute_score_batch` is the batch form its batch reward manager calls.
The reward config arrives as `reward_config=` (a HierRReward / ExactMatchReward, or a mapping
validated once per object); default HierR. Rows never raise: malformed model output or ground
truth gives score 0 with `error_type` (the safety net, slca.rewards.net); a bad config raises.
`score_records` gives the same scores as typed `RewardRecord`s (slca.rewards.record).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Sequence

from pydantic import TypeAdapter

from slca.config.groups.reward import ExactMatchReward, HierRReward, RewardConfig
from slca.rewards.exact_match import exact_match_batch
from slca.rewards.hierr import hierr_batch, hierr_one
from slca.rewards.net import check_lengths
from slca.rewards.record import RewardRecord
from slca.registry import Registry

BatchReward = Callable[[Sequence[Any], Sequence[Any], Sequence[Any], Any], list[dict[str, Any]]]

REWARDS: Registry[BatchReward] = Registry("reward")


@REWARDS.register("hierr")
def _hierr(solution_strs: Sequence[Any], ground_truths: Sequence[Any], extra_infos: Sequence[Any], cfg: HierRReward) -> list[dict[str, Any]]:
    return hierr_batch(solution_strs, ground_truths, extra_infos, cfg)


REWARDS.register("exact_match")(exact_match_batch)


def get_reward(name: str) -> BatchReward:
    """The batch reward function registered as `name`: (solutions, ground_truths, extra_infos, cfg) → rows."""
    return REWARDS.get(name)


_ADAPTER: TypeAdapter[Any] | None = None
_DEFAULT = HierRReward()
_RESOLVED: dict[int, tuple[Any, Any]] = {}


def _plain(x: Any) -> Any:
    """Mappings/sequences (e.g. OmegaConf containers) → plain dicts/lists for validation."""
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)) or (hasattr(x, "__iter__") and hasattr(x, "__getitem__") and not isinstance(x, (str, bytes))):
        return [_plain(v) for v in x]
    return x


def resolve_reward_config(cfg: Any) -> HierRReward | ExactMatchReward:
    """A typed reward config from None (default HierR), a model, or a mapping (cached per object).

    An invalid mapping is a configuration error and raises pydantic's ValidationError.
    """
    global _ADAPTER
    if cfg is None:
        return _DEFAULT
    if isinstance(cfg, (HierRReward, ExactMatchReward)):
        return cfg
    hit = _RESOLVED.get(id(cfg))
    if hit is not None and hit[0] is cfg:
        return hit[1]
    if _ADAPTER is None:
        _ADAPTER = TypeAdapter(RewardConfig)
    data = _plain(cfg)
    if isinstance(data, dict):
        data.setdefault("name", "hierr")
    model = _ADAPTER.validate_python(data)
    if len(_RESOLVED) > 64:
        _RESOLVED.clear()
    _RESOLVED[id(cfg)] = (cfg, model)
    return model


def compute_score(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Score one rollout (verl custom reward signature); see module docstring."""
    cfg = resolve_reward_config(kwargs.get("reward_config"))
    if cfg.name == "hierr":
        return hierr_one(solution_str, ground_truth, extra_info, cfg)  # skips the batch plumbing
    return REWARDS.get(cfg.name)([solution_str], [ground_truth], [extra_info], cfg)[0]


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[Any],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """Score a batch (verl batch reward manager signature); summaries are judged concurrently."""
    cfg = resolve_reward_config(kwargs.get("reward_config"))
    if extra_infos is None:
        extra_infos = [None] * len(solution_strs)
    check_lengths(solution_strs, ground_truths, extra_infos)
    return REWARDS.get(cfg.name)(solution_strs, ground_truths, extra_infos, cfg)


def score_records(
    solution_strs: Sequence[Any],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    *,
    reward_config: Any = None,
    last_turn_is_tool_call: Sequence[bool] | None = None,
) -> list[RewardRecord]:
    """`compute_score_batch` as typed records; `last_turn_is_tool_call` (one flag per rollout,
    from the rollout) fills the record field the reward cannot know."""
    rows = compute_score_batch([""] * len(solution_strs), solution_strs, ground_truths, extra_infos, reward_config=reward_config)
    if last_turn_is_tool_call is None:
        return [RewardRecord.from_row(r) for r in rows]
    if len(last_turn_is_tool_call) != len(rows):
        raise ValueError(f"{len(last_turn_is_tool_call)} last-turn flags for {len(rows)} rollouts")
    return [RewardRecord.from_row(r, last_turn_is_tool_call=bool(f)) for r, f in zip(rows, last_turn_is_tool_call)]
