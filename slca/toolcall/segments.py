"""Segment masks: split a response into the tool (process) and summary segments (SPEC §1).

The summary segment is the last contiguous run of learnable tokens (mask > 0.5); the process
segment is the union of every earlier run. Nothing looks at token text. Optionally (SPEC §1
[FIX]) a final run that is a tool call goes to the process segment and the summary is absent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import torch

FinalToolTurn = Literal["summary", "process"]
FINAL_TOOL_TURN_MODES: tuple[str, ...] = ("summary", "process")


def segment_runs(mask_1d: Any) -> list[tuple[int, int]]:
    """Maximal runs of learnable positions (value > 0.5) as half-open [s, e), in order (SPEC §1 step 1).

    mask_1d: a 1-D tensor, array or sequence of numbers/bools.
    """
    if hasattr(mask_1d, "tolist"):
        mask_1d = mask_1d.tolist()
    runs: list[tuple[int, int]] = []
    start = -1
    for i, v in enumerate(mask_1d):
        if v > 0.5:
            if start < 0:
                start = i
        elif start >= 0:
            runs.append((start, i))
            start = -1
    if start >= 0:
        runs.append((start, len(mask_1d)))
    return runs


def split_segments(
    response_mask: torch.Tensor,
    *,
    last_run_is_tool_call: torch.Tensor | None = None,
    final_tool_turn: FinalToolTurn = "summary",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Process/summary masks and presence flags for a batch, vectorised (SPEC §1 steps 2–5).

    response_mask: [B, T] float or bool; a token is learnable iff > 0.5.
    last_run_is_tool_call: optional [B] bool, needed when final_tool_turn == "process".
    final_tool_turn: "summary" (reference) keeps a final tool-call run as the summary;
        "process" moves it into the process segment and marks the summary absent.
    Returns (process_mask [B, T] bool, summary_mask [B, T] bool,
             process_present [B] bool, summary_present [B] bool); the masks are disjoint and
    their union is exactly the learnable mask.
    """
    import torch

    if final_tool_turn not in FINAL_TOOL_TURN_MODES:
        raise ValueError(f"final_tool_turn must be one of {FINAL_TOOL_TURN_MODES}, got {final_tool_turn!r}")
    if response_mask.dim() != 2:
        raise ValueError(f"response_mask must be [B, T], got shape {tuple(response_mask.shape)}")
    learn = response_mask > 0.5 if response_mask.dtype != torch.bool else response_mask
    batch, length = learn.shape
    if length == 0:
        empty = torch.zeros(batch, dtype=torch.bool, device=learn.device)
        return learn.clone(), learn.clone(), empty, empty.clone()
    # A run starts where a learnable token follows a non-learnable one (or the row start).
    starts = learn.clone()
    starts[:, 1:] &= ~learn[:, :-1]
    run_id = starts.cumsum(dim=1, dtype=torch.int32)  # 1-based run index at each position
    n_runs = run_id[:, -1]
    summary = learn & (run_id == n_runs.unsqueeze(1))
    process_present = n_runs >= 2
    summary_present = n_runs >= 1
    if final_tool_turn == "process":
        if last_run_is_tool_call is None:
            raise ValueError('final_tool_turn="process" needs last_run_is_tool_call')
        flip = last_run_is_tool_call.to(device=learn.device, dtype=torch.bool).reshape(batch) & summary_present
        summary &= ~flip.unsqueeze(1)
        process_present = process_present | flip
        summary_present = summary_present & ~flip
    process = learn & ~summary
    return process, summary, process_present, summary_present


def split_spans(
    spans: Iterable[Sequence[Any]],
    *,
    learnable_roles: Iterable[str] = ("assistant",),
    last_is_tool_call: bool = False,
    final_tool_turn: FinalToolTurn = "summary",
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The same split on character spans of a rendered conversation (for SFT rows).

    spans: (start, end, role) triples, half-open; only `learnable_roles` count, and touching or
        overlapping spans merge into one run, as adjacent learnable tokens would.
    Returns (process_spans, summary_spans); summary_spans holds at most one span.
    """
    if final_tool_turn not in FINAL_TOOL_TURN_MODES:
        raise ValueError(f"final_tool_turn must be one of {FINAL_TOOL_TURN_MODES}, got {final_tool_turn!r}")
    roles = set(learnable_roles)
    kept = sorted((int(s), int(e)) for s, e, role in spans if role in roles and int(e) > int(s))
    runs: list[tuple[int, int]] = []
    for s, e in kept:
        if runs and s <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], e))
        else:
            runs.append((s, e))
    if not runs:
        return [], []
    if final_tool_turn == "process" and last_is_tool_call:
        return runs, []
    return runs[:-1], [runs[-1]]
