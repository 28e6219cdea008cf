"""Segment boundaries for the estimators: docs/method.md#segments-from-mask-topology reduced to one start index per row.

The summary segment is the last contiguous run of learnable tokens (mask > 0.5) and the process
segment is every earlier learnable token, so the split is fully described by the start of the
last run. The run finding lives in `slca.toolcall.segments.summary_starts` (the one
implementation, also behind `split_segments`); this module keeps the start index instead of
[B, T] masks so the estimators can route values without building both masks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from slca.algos import kernels
from slca.toolcall.segments import positions_before, summary_starts


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
        return positions_before(self.last_start, self.learnable.shape[1])

    def masks(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(process_mask, summary_mask), [B, T] bool each, exactly docs/method.md#segments-from-mask-topology."""
        region = self.process_region()
        return self.learnable & region, self.learnable & ~region


def segment_bounds(
    response_mask: torch.Tensor,
    *,
    last_run_is_tool_call: torch.Tensor | None = None,
    final_tool_turn: Literal["summary", "process"] = "summary",
) -> SegmentBounds:
    """Summary start and presence flags per row (docs/method.md#segments-from-mask-topology; final_tool_turn as its [FIX]).

    response_mask: [B, T] float, int or bool; learnable iff > 0.5.
    last_run_is_tool_call: [B] bool, required for final_tool_turn="process": those rows' last run
    joins the process segment and their summary is absent.
    """
    return SegmentBounds(
        *summary_starts(response_mask, last_run_is_tool_call=last_run_is_tool_call, final_tool_turn=final_tool_turn)
    )


def route(
    bounds: SegmentBounds,
    response_mask: torch.Tensor,
    process_value: torch.Tensor,
    summary_value: torch.Tensor,
) -> torch.Tensor:
    """Token advantages adv_t = (process_mask_t * process_value + summary_mask_t * summary_value) * mask_t.

    process_value / summary_value: [B] float. Returns float32 [B, T]; exactly 0 off the learnable
    tokens (docs/method.md#slca-grpo step 7).
    """
    learn = bounds.learnable
    out = kernels.select_rows(bounds.process_region(), process_value, summary_value)
    kernels.mul_(out, response_mask)
    if response_mask.dtype != torch.bool and kernels.count_nonzero(response_mask) != kernels.count_nonzero(learn):
        # Some non-learnable entries are non-zero (e.g. 0.3): zero them explicitly.
        kernels.mul_(out, learn)
    return out
