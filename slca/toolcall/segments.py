"""Segment masks: split a response into the tool (process) and summary segments (docs/method.md#segments-from-mask-topology).

The summary segment is the last contiguous run of learnable tokens (mask > 0.5); the process
segment is the union of every earlier run. Nothing looks at token text. Optionally (docs/method.md#segments-from-mask-topology
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
    """Maximal runs of learnable positions (value > 0.5) as half-open [s, e), in order (docs/method.md#segments-from-mask-topology step 1).

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


def learnable_mask(response_mask: torch.Tensor) -> torch.Tensor:
    """response_mask > 0.5 as bool [B, T]; a bool mask is returned as is.

    CPU tensors go through numpy, whose large outputs are cheaper to first-touch (see
    `benchmarks/estimators.py`); numpy has no bfloat16, so those take the torch op.
    """
    import torch

    if response_mask.dtype == torch.bool:
        return response_mask
    if response_mask.device.type == "cpu" and response_mask.dtype != torch.bfloat16:
        import numpy as np

        return torch.from_numpy(np.greater(response_mask.detach().numpy(), 0.5))
    return response_mask > 0.5


def positions_before(start: torch.Tensor, length: int) -> torch.Tensor:
    """[B, T] bool: t < start[b]. start: [B] long."""
    import torch

    if start.device.type == "cpu":
        import numpy as np

        pos_dtype = np.int16 if length < 2**15 else np.int32  # narrow ints keep the compare cheap
        bound = np.minimum(start.numpy(), length).astype(pos_dtype)
        return torch.from_numpy(np.less(np.arange(length, dtype=pos_dtype)[None, :], bound[:, None]))
    return torch.arange(length, device=start.device).unsqueeze(0) < start.unsqueeze(1)


def summary_starts(
    response_mask: torch.Tensor,
    *,
    last_run_is_tool_call: torch.Tensor | None = None,
    final_tool_turn: FinalToolTurn = "summary",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """docs/method.md#segments-from-mask-topology reduced to one index per row: where the summary segment starts.

    The summary is the last run of learnable tokens and the process segment every earlier
    learnable token, so process = learnable & t < start and summary = learnable & t >= start.
    Finding only the first/last run start (numpy's early-exit argmax on CPU) is about 5x cheaper
    at 2048 x 8192 than labelling every run with an integer cumsum.

    response_mask: [B, T] float, int or bool; learnable iff > 0.5.
    last_run_is_tool_call: [B] bool, required for final_tool_turn="process" (docs/method.md#segments-from-mask-topology [FIX]): those
        rows' last run joins the process segment and their summary is absent.
    Returns (learnable [B, T] bool, start [B] long (T where the summary is absent),
             process_present [B] bool, summary_present [B] bool).
    """
    import torch

    if final_tool_turn not in FINAL_TOOL_TURN_MODES:
        raise ValueError(f"final_tool_turn must be one of {FINAL_TOOL_TURN_MODES}, got {final_tool_turn!r}")
    if response_mask.dim() != 2:
        raise ValueError(f"response_mask must be [B, T], got shape {tuple(response_mask.shape)}")
    learn = learnable_mask(response_mask)
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
    start = torch.where(has, last, torch.full_like(last, length))
    if final_tool_turn == "process":
        if last_run_is_tool_call is None:
            raise ValueError('final_tool_turn="process" needs last_run_is_tool_call')
        flip = torch.as_tensor(last_run_is_tool_call, device=learn.device).to(torch.bool).reshape(batch) & has
        start = torch.where(flip, torch.full_like(start, length), start)
        process_present = process_present | flip
        summary_present = summary_present & ~flip
    return learn, start, process_present, summary_present


def _run_starts_numpy(learn: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(first run start, last run start, has a run) per row of a CPU bool [B, T] (T >= 1)."""
    import numpy as np
    import torch

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
    import torch

    length = learn.shape[1]
    starts = learn.clone()
    starts[:, 1:] &= ~learn[:, :-1]
    t = torch.arange(length, device=learn.device)
    first = torch.where(starts, t, length).amin(dim=1)
    last = torch.where(starts, t, -1).amax(dim=1)
    has = last >= 0
    return torch.where(has, first, 0), torch.where(has, last, length - 1), has


def split_segments(
    response_mask: torch.Tensor,
    *,
    last_run_is_tool_call: torch.Tensor | None = None,
    final_tool_turn: FinalToolTurn = "summary",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Process/summary masks and presence flags for a batch, vectorised (docs/method.md#segments-from-mask-topology steps 2–5).

    response_mask: [B, T] float or bool; a token is learnable iff > 0.5.
    last_run_is_tool_call: optional [B] bool, needed when final_tool_turn == "process".
    final_tool_turn: "summary" (reference) keeps a final tool-call run as the summary;
        "process" moves it into the process segment and marks the summary absent.
    Returns (process_mask [B, T] bool, summary_mask [B, T] bool,
             process_present [B] bool, summary_present [B] bool); the masks are disjoint and
    their union is exactly the learnable mask.
    """
    learn, start, process_present, summary_present = summary_starts(
        response_mask, last_run_is_tool_call=last_run_is_tool_call, final_tool_turn=final_tool_turn
    )
    before = positions_before(start, learn.shape[1])
    return learn & before, learn & ~before, process_present, summary_present


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
