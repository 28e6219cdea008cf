"""The typed per-rollout reward record and its batched tensor view.

Rewards return verl-compatible rows (verl needs a mapping with "score"); their column names are
the wire format, also read back from verl's non-tensor batch. `RewardRecord.from_row` /
`RewardRecord.to_row` and `RewardBatch.from_columns` are the only places that spell those
names: estimators, down-samplers and trainers read typed fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any

# record field -> wire column (the reward row key and verl's non-tensor column).
WIRE: Mapping[str, str] = MappingProxyType(
    {
        "score": "score",
        "process": "process_score",
        "summary": "summary_score",
        "no_call": "should_call_but_no_call",
        "success": "success",
        "error_type": "error_type",
        "toolpo_correct_ratio": "toolpo_correct_ratio",
        "last_turn_is_tool_call": "last_run_is_tool_call",
    }
)
# Other spellings of a column accepted when reading (the reference writes these too,
# docs/method.md#slca-grpo), and the prefixes verl's reward manager may put before a column.
ALIASES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"score": ("total_score", "score_total"), "no_call": ("should_no_call",)}
)
COLUMN_PREFIXES = ("", "reward/tool_call/", "reward/")
_REQUIRED = ("score", "process", "summary")


def _normalised(row: Mapping[str, Any], score: float) -> float:
    """The reward on a [0, 1] scale: exact match's 0/1 score, else HierR's weighted_score_norm."""
    if "exact_match" in row:
        return score
    norm = row.get("weighted_score_norm")
    return score if norm is None else float(norm)


@dataclass(frozen=True)
class RewardRecord:
    """What a reward says about one rollout.

    score: the total reward; process / summary: the tool-segment and summary-segment rewards;
    no_call: gold needed a call and none was made (docs/method.md#omission-path); normalised:
    the reward on [0, 1] (what success thresholds and the pre-rollout filter compare);
    toolpo_correct_ratio: strict-correct calls / |gold| (None when the reward does not
    provide it); last_turn_is_tool_call: set from the rollout (None when unknown); error_type:
    why the row scored as it did ("" when clean); components: every other column of the row.
    """

    score: float
    process: float
    summary: float
    no_call: bool = False
    success: bool = False
    normalised: float = 0.0
    error_type: str = ""
    toolpo_correct_ratio: float | None = None
    last_turn_is_tool_call: bool | None = None
    components: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: Mapping[str, Any], *, last_turn_is_tool_call: bool | None = None) -> RewardRecord:
        """The record of one reward row (the verl-compatible dict); missing score, process or
        summary is a KeyError naming the column."""
        missing = [WIRE[k] for k in _REQUIRED if WIRE[k] not in row]
        if missing:
            raise KeyError(f"reward row lacks {missing} (has {sorted(row)})")
        score = float(row["score"])
        ratio = row.get("toolpo_correct_ratio")
        last = row.get("last_run_is_tool_call") if last_turn_is_tool_call is None else last_turn_is_tool_call
        wire = set(WIRE.values())
        return cls(
            score=score,
            process=float(row["process_score"]),
            summary=float(row["summary_score"]),
            no_call=bool(row.get("should_call_but_no_call", 0)),
            success=bool(row.get("success", 0)),
            normalised=_normalised(row, score),
            error_type=str(row.get("error_type", "")),
            toolpo_correct_ratio=None if ratio is None else float(ratio),
            last_turn_is_tool_call=None if last is None else bool(last),
            components=MappingProxyType({k: v for k, v in row.items() if k not in wire}),
        )

    def to_row(self) -> dict[str, Any]:
        """The verl-compatible dict ("score" first; flags as 0/1; unknown fields left out)."""
        row: dict[str, Any] = {
            "score": self.score,
            "process_score": self.process,
            "summary_score": self.summary,
            "should_call_but_no_call": int(self.no_call),
            "success": int(self.success),
            "error_type": self.error_type,
        }
        if self.toolpo_correct_ratio is not None:
            row["toolpo_correct_ratio"] = self.toolpo_correct_ratio
        if self.last_turn_is_tool_call is not None:
            row["last_run_is_tool_call"] = int(self.last_turn_is_tool_call)
        row.update(self.components)
        return row

    def with_rollout(self, *, last_turn_is_tool_call: bool) -> RewardRecord:
        """This record with what the rollout knows filled in."""
        return replace(self, last_turn_is_tool_call=bool(last_turn_is_tool_call))


_TENSOR_FIELDS = ("score", "process", "summary", "no_call", "normalised", "toolpo_correct_ratio", "last_turn_is_tool_call")
_FLAGS = frozenset(("no_call", "last_turn_is_tool_call"))


@dataclass(frozen=True)
class RewardBatch:
    """[N] tensors of a batch of records: float32 values, bool flags; None where no rollout of
    the batch has the field (e.g. `toolpo_correct_ratio` under a reward that does not give it)."""

    score: Any = None
    process: Any = None
    summary: Any = None
    no_call: Any = None
    normalised: Any = None
    toolpo_correct_ratio: Any = None
    last_turn_is_tool_call: Any = None

    def __len__(self) -> int:
        for name in _TENSOR_FIELDS:
            t = getattr(self, name)
            if t is not None:
                return int(t.shape[0])
        return 0

    @classmethod
    def from_records(cls, records: Sequence[RewardRecord], device: Any = None) -> RewardBatch:
        """Stack records; an optional field is kept only when every record has it."""
        import torch

        out: dict[str, Any] = {}
        for name in _TENSOR_FIELDS:
            values = [getattr(r, name) for r in records]
            if any(v is None for v in values):
                continue
            dtype = torch.bool if name in _FLAGS else torch.float32
            out[name] = torch.tensor(values, dtype=dtype, device=device)
        return cls(**out)

    @classmethod
    def from_columns(cls, columns: Mapping[str, Any] | None, batch: int, device: Any = None) -> RewardBatch:
        """From per-rollout columns under their wire names (verl's non-tensor batch, with or
        without the `reward/tool_call/` prefix, or a plain dict of [B] values); None entries
        of an object column read as 0. A column with the wrong length is a ValueError."""
        if isinstance(columns, RewardBatch):
            return columns
        out: dict[str, Any] = {}
        if columns:
            for name, wire in WIRE.items():
                if name not in _TENSOR_FIELDS:
                    continue
                found = _find_column(columns, (wire, *ALIASES.get(name, ())))
                if found is not None:
                    out[name] = _as_tensor(found, wire, batch, device, name in _FLAGS)
            # as `RewardRecord.from_row`: exact match's 0/1, else HierR's weighted_score_norm
            for wire in ("exact_match", "weighted_score_norm"):
                found = _find_column(columns, (wire,))
                if found is not None:
                    out["normalised"] = _as_tensor(found, wire, batch, device, False)
                    break
        return cls(**out)

    def need(self, name: str, who: str) -> Any:
        """Field `name`, or a KeyError saying that `who` needs its wire column."""
        value = getattr(self, name)
        if value is None:
            have = [WIRE.get(f, f) for f in _TENSOR_FIELDS if getattr(self, f) is not None]
            raise KeyError(f"{who} needs the reward column {WIRE.get(name, name)!r} (have {have})")
        return value

    def value(self, name: str, default: float) -> Any:
        """Field `name`, or `default` for every rollout when absent."""
        import torch

        value = getattr(self, name)
        if value is not None:
            return value
        present = [t for t in (getattr(self, f) for f in _TENSOR_FIELDS) if t is not None]
        dtype = torch.bool if name in _FLAGS else torch.float32
        return torch.full((len(self),), default, dtype=dtype, device=present[0].device if present else None)

    def select(self, rows: Any) -> RewardBatch:
        """The rows `rows` (a LongTensor or list of indices) of every field."""
        return RewardBatch(**{f.name: (None if getattr(self, f.name) is None else getattr(self, f.name)[rows]) for f in fields(self)})

    def to(self, device: Any) -> RewardBatch:
        return RewardBatch(**{f.name: (None if getattr(self, f.name) is None else getattr(self, f.name).to(device)) for f in fields(self)})


def _find_column(columns: Mapping[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        for prefix in COLUMN_PREFIXES:
            key = prefix + name
            if key in columns:
                return columns[key]
    return None


def _as_tensor(values: Any, wire: str, batch: int, device: Any, flag: bool) -> Any:
    import numpy as np
    import torch

    if isinstance(values, torch.Tensor):
        t = values.detach().to(device=device, dtype=torch.float32).reshape(-1)
    else:
        arr = np.asarray(values)
        if arr.dtype.kind in "biuf":
            t = torch.from_numpy(arr.astype(np.float32).reshape(-1)).to(device)
        else:  # object column (verl non-tensor batch): None means "not scored" and reads as 0
            t = torch.tensor([0.0 if v is None else float(v) for v in arr.reshape(-1).tolist()], dtype=torch.float32, device=device)
    if t.numel() != batch:
        raise ValueError(f"reward column {wire!r} has {t.numel()} values for a batch of {batch}")
    return t > 0.5 if flag else t
