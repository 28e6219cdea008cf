"""Segment boundaries for the estimators: SPEC §1 reduced to one start index per row.

The summary segment is the last contiguous run of learnable tokens (mask > 0.5) and the process
segment is every earlier learnable token, so the split is fully described by the start of the
last run: process = learnable & t < start, summary = learnable & t >= start. Computing only that
index (first/last run start via numpy's early-exit argmax on bool rows) avoids the [B, T] integer
cumsum that `slca.toolcall.segments.split_segments` uses, which costs about 5x more at
2048 x 8192; the masks it implies are identical (tested against it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from slca.algos import kernels


@dataclass(frozen=True)
class SegmentBounds:
    """learnable [B, T] bool; last_start [B] long (T where the row's summary is absent);
    process_present / summary_present [B] bool."""

    learnable: torch.Tensor
    last_start: torch.Tensor
    process_present: torch.Tensor
    summary_present: torch.Tensor

    def process_region(self) -> torch.Tensor:
        """[B, T] bool: positions before the summary start (learnable or not)."""
        return kernels.before(self.last_start, self.learnable.shape[1])

    def masks(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(process_mask, summary_mask), [B, T] bool each, exactly SPEC §1."""
        region = self.process_region()
        return self.learnable & region, self.learnable & ~region


def segment_bounds(
    response_mask: torch.Tensor,
    *,
    last_run_is_tool_call: torch.Tensor | None = None,
    final_tool_turn: Literal["summary", "process"] = "summary",
) -> SegmentBounds:
    """Summary start and presence flags per row (SPEC §1; final_tool_turn as its [FIX]).

    response_mask: [B, T] float, int or bool; learnable iff > 0.5.
    last_run_is_tool_call: [B] bool, required for final_tool_turn="process": those rows' last run
    joins the process segment and their summary is absent.
    """
    if response_mask.dim() != 2:
        raise ValueError(f"response_mask must be [B, T], got shape {tuple(response_mask.shape)}")
    if final_tool_turn not in ("summary", "process"):
        raise ValueError(f"final_tool_turn must be 'summary' or 'process', got {final_tool_turn!r}")
    learn = kernels.learnable(response_mask)
    batch, length = learn.shape
    if length == 0 or batch == 0:
        first = last = torch.zeros(batch, dtype=torch.long, device=learn.device)
        has = torch.zeros(batch, dtype=torch.bool, device=learn.device)
    elif learn.device.type == "cpu":
        first, last, has = _run_starts_numpy(learn)
    else:
        first, last, has = _run_starts_torch(learn)
    summary_present = has
    process_present = has & (first < last)
    last_start = torch.where(has, last, torch.full_like(last, length))
    if final_tool_turn == "process":
        if last_run_is_tool_call is None:
            raise ValueError('final_tool_turn="process" needs last_run_is_tool_call')
        flip = torch.as_tensor(last_run_is_tool_call, device=learn.device).to(torch.bool).reshape(batch) & has
        last_start = torch.where(flip, torch.full_like(last_start, length), last_start)
        process_present = process_present | flip
        summary_present = summary_present & ~flip
    return SegmentBounds(learn, last_start, process_present, summary_present)


def _run_starts_numpy(learn: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(first run start, last run start, has a run) per row of a CPU bool [B, T] (T >= 1)."""
    lrn = learn.numpy()
    batch, length = lrn.shape
    starts = np.empty(lrn.shape, dtype=bool)
    starts[:, 0] = lrn[:, 0]
    np.greater(lrn[:, 1:], lrn[:, :-1], out=starts[:, 1:])  # learnable after non-learnable
    # numpy's argmax on bool stops at the first True: near-free for run starts.
    first = starts.argmax(axis=1)
    last = (length - 1) - torch.from_numpy(starts).flip(1).numpy().argmax(axis=1)
    has = starts[np.arange(batch), first]
    return torch.from_numpy(first), torch.from_numpy(last), torch.from_numpy(has)


def _run_starts_torch(learn: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Same as `_run_starts_numpy` with torch ops (any device)."""
    length = learn.shape[1]
    starts = learn.clone()
    starts[:, 1:] &= ~learn[:, :-1]
    t = torch.arange(length, device=learn.device)
    first = torch.where(starts, t, length).amin(dim=1)
    last = torch.where(starts, t, -1).amax(dim=1)
    has = last >= 0
    return torch.where(has, first, 0), torch.where(has, last, length - 1), has


def route(
    bounds: SegmentBounds,
    response_mask: torch.Tensor,
    process_value: torch.Tensor,
    summary_value: torch.Tensor,
) -> torch.Tensor:
    """Token advantages adv_t = (process_mask_t * process_value + summary_mask_t * summary_value) * mask_t.

    process_value / summary_value: [B] float. Returns float32 [B, T]; exactly 0 off the learnable
    tokens (SPEC §3 step 7).
    """
    learn = bounds.learnable
    out = kernels.select_rows(bounds.process_region(), process_value, summary_value)
    kernels.mul_(out, response_mask)
    if response_mask.dtype != torch.bool and kernels.count_nonzero(response_mask) != kernels.count_nonzero(learn):
        # Some non-learnable entries are non-zero (e.g. 0.3): zero them explicitly.
        kernels.mul_(out, learn)
    return out
