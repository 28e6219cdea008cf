"""Gold tool-call normalisation (docs/method.md#ground-truth) and ground-truth validation, cached per object."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from slca.rewards.components import arg_specs, strict_keys

# Gold error kinds (reported, never raised).
GOLD_JSON_ERROR = "gold_json_error"
GOLD_NOT_LIST = "gold_not_list"


@dataclass(frozen=True, slots=True)
class GoldCall:
    """One gold call; `arguments` is the decoded dict, or None when the gold carried none."""

    name: str
    arguments: dict[str, Any] | None


@dataclass(frozen=True)
class Gold:
    """Normalised gold: `steps` (one tuple per step) and `flat` (all calls in order).

    `names_only` flags gold given as bare names (docs/method.md#reference-quirks Q1): key and value then score 1.0
    for every response and `parallel` compares against the whole list. `error` names why the
    raw gold was unusable (it is then treated as empty, as the reference does).
    """

    steps: tuple[tuple[GoldCall, ...], ...]
    flat: tuple[GoldCall, ...]
    with_args: tuple[GoldCall, ...]
    name_counts: Mapping[str, int]
    names_only: bool
    nested: bool
    n_dropped: int = 0
    error: str | None = None
    first_step_count: int = field(init=False)
    arg_specs: tuple[tuple[Any, ...], ...] = field(init=False)  # for components.key_value_scores
    strict_keys: tuple[tuple[str, dict[str, Any] | None, bool], ...] = field(init=False)  # for components.strict_correct_ratio

    def __post_init__(self) -> None:
        object.__setattr__(self, "first_step_count", len(self.steps[0]) if self.steps else 0)
        object.__setattr__(self, "arg_specs", arg_specs(self.with_args))
        object.__setattr__(self, "strict_keys", strict_keys(self.flat, self.names_only))


EMPTY_GOLD = Gold((), (), (), {}, False, False)


def _as_list(x: Any) -> list[Any] | None:
    """Lists, tuples and array-likes (numpy object arrays from parquet) become lists."""
    if isinstance(x, list):
        return x
    if isinstance(x, tuple):
        return list(x)
    tolist = getattr(x, "tolist", None)
    if tolist is not None and not isinstance(x, (str, bytes, dict)):
        try:
            out = tolist()
        except Exception:  # noqa: BLE001 - an odd object is just not a list
            return None
        return out if isinstance(out, list) else None
    return None


def _decode_args(args: Any) -> dict[str, Any] | None:
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except (ValueError, RecursionError):
            return None
    if args is not None and not isinstance(args, dict):
        # Parquet struct columns can surface as Mapping-like objects.
        if isinstance(args, Mapping):
            return dict(args)
        return None
    return args


def _gold_call(item: Any) -> tuple[GoldCall | None, bool]:
    """(call or None if dropped, was a bare name)."""
    if isinstance(item, str):
        return GoldCall(item, None), True
    if isinstance(item, Mapping):
        name = item.get("name")
        raw = item.get("arguments")
        if not raw:
            raw = item.get("parameters")
        return GoldCall("" if name is None else str(name), _decode_args(raw)), False
    return None, False


def normalise_gold(raw: Any) -> Gold:
    """Normalise `gold_tool_calls` (docs/method.md#ground-truth).

    Accepts a list (or array/tuple) or a JSON string of one. If the first element is itself a
    list the gold is *nested* (each inner list = one step; empty steps dropped), otherwise
    *flat* (all items form one step). String items become name-only calls; items that are
    neither dicts nor strings are dropped and counted.
    """
    if raw is None:
        return EMPTY_GOLD
    if isinstance(raw, (str, bytes)):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):
            return Gold((), (), (), {}, False, False, 0, GOLD_JSON_ERROR)
        if raw is None:
            return EMPTY_GOLD
    items = _as_list(raw)
    if items is None:
        return Gold((), (), (), {}, False, False, 0, GOLD_NOT_LIST)
    if not items:
        return EMPTY_GOLD
    nested = _as_list(items[0]) is not None
    steps: list[tuple[GoldCall, ...]] = []
    dropped = 0
    if nested:
        raw_steps = []
        for s in items:
            as_list = _as_list(s)
            if as_list is None:
                dropped += 1
            else:
                raw_steps.append(as_list)
    else:
        raw_steps = [items]
    all_bare = True
    for raw_step in raw_steps:
        step = []
        for it in raw_step:
            call, bare = _gold_call(it)
            if call is None:
                dropped += 1
                continue
            all_bare = all_bare and bare
            step.append(call)
        if step:
            steps.append(tuple(step))
    flat = tuple(c for s in steps for c in s)
    with_args = tuple(c for c in flat if c.arguments)
    counts: dict[str, int] = {}
    for c in flat:
        counts[c.name] = counts.get(c.name, 0) + 1
    return Gold(tuple(steps), flat, with_args, counts, bool(flat) and all_bare, nested, dropped)


@dataclass(frozen=True)
class RowGold:
    """What the reward needs from one `ground_truth` (validated once, then cached)."""

    gold: Gold
    allowed: frozenset[str]
    question: str | None
    gold_answer: str | None
    error: str | None = None  # row-level error: the reward returns an error result


INVALID_GROUND_TRUTH = "invalid_ground_truth"
MISSING_ALLOWED_TOOLS = "missing_allowed_tools"
_ANSWER_KEYS = ("gold_answer", "reference_answer")


def _text(x: Any) -> str | None:
    return x if isinstance(x, str) and x else None


def read_ground_truth(gt: Any) -> RowGold:
    """Validate a row's ground truth (docs/method.md#ground-truth); problems become `error`, never exceptions."""
    if not isinstance(gt, Mapping):
        return RowGold(EMPTY_GOLD, frozenset(), None, None, INVALID_GROUND_TRUTH)
    allowed_raw = gt.get("allowed_tools")
    if isinstance(allowed_raw, str):
        try:
            allowed_raw = json.loads(allowed_raw)
        except (ValueError, RecursionError):
            allowed_raw = None
    allowed_list = _as_list(allowed_raw) if allowed_raw is not None else None
    allowed = frozenset(a for a in (allowed_list or ()) if isinstance(a, str))
    gold = normalise_gold(gt.get("gold_tool_calls"))
    question = _text(gt.get("question_content"))
    answer = next((a for a in (_text(gt.get(k)) for k in _ANSWER_KEYS) if a), None)
    error = None if allowed else MISSING_ALLOWED_TOOLS
    return RowGold(gold, allowed, question, answer, error)


class GoldMemo:
    """`read_ground_truth` memoised on the ground-truth object's identity, for one scorer's lifetime
    (a `HierR` owns one). Bounded; holds a reference to each key so its id cannot be recycled.

    verl repeats each prompt's non-tensor row n times by reference, so the n rollouts of one
    prompt share one ground-truth object. A caller that mutates a ground truth in place after
    scoring it would see the stale entry; nothing in the pipeline does that.
    """

    def __init__(self, size: int = 8192) -> None:
        self.size = size
        self._d: dict[int, tuple[Any, RowGold]] = {}

    def __call__(self, gt: Any) -> RowGold:
        hit = self._d.get(id(gt))
        if hit is not None and hit[0] is gt:
            return hit[1]
        value = read_ground_truth(gt)
        if len(self._d) >= self.size:
            self._d.clear()  # crude but O(1) amortised; a miss only costs a re-normalisation
        self._d[id(gt)] = (gt, value)
        return value
