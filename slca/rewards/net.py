"""The rewards' one safety net: malformed model output or ground truth scores 0 with a reason and
never raises (docs/method.md#format-check).

Every reward path (HierR, exact match, the verl entry points) and every judge call goes through
these helpers. Configuration is resolved before them (a bad reward config still raises); inside
them, a row whose scoring raises becomes an error row `internal_error:<exception>` and a judge
call that raises scores the failure score, flagged as a failure. The parsers name every known
kind of malformed output themselves; the property and fuzz tests assert the catch-all branch is
never taken.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, TypeVar

T = TypeVar("T")
INTERNAL_ERROR = "internal_error"


def failure_reason(exc: BaseException) -> str:
    """The `error_type` of a row the net caught: `internal_error:<exception class>`."""
    return f"{INTERNAL_ERROR}:{type(exc).__name__}"


def guarded(fn: Callable[..., T], on_error: Callable[[str], T], *args: Any) -> T:
    """fn(*args), or on_error(reason) when it raises."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - the net: model output must never stop a training step
        return on_error(failure_reason(exc))


def guarded_rows(
    score_batch: Callable[[Sequence[Any], Sequence[Any], Sequence[Any]], list[T]],
    on_error: Callable[[str], T],
    solution_strs: Sequence[Any],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any],
) -> list[T]:
    """score_batch over the batch; if it raises, row by row, a row that raises becoming on_error(reason)."""
    try:
        rows = score_batch(solution_strs, ground_truths, extra_infos)
        if len(rows) == len(solution_strs):
            return rows
    except Exception:  # noqa: BLE001 - find the row(s) at fault below
        pass
    return [
        guarded(lambda s, g, e: score_batch([s], [g], [e])[0], on_error, s, g, e)
        for s, g, e in zip(solution_strs, ground_truths, extra_infos)
    ]


def judged(judge: Any, reqs: Sequence[Any], failure: T) -> list[T]:
    """judge.score_batch(reqs); if it raises, request by request, a request that raises scoring `failure`."""
    try:
        out = judge.score_batch(reqs)
        if len(out) == len(reqs):
            return list(out)
    except Exception:  # noqa: BLE001 - find the request(s) at fault below
        pass
    return [guarded(judge.score, lambda _reason: failure, r) for r in reqs]


def check_lengths(solution_strs: Sequence[Any], ground_truths: Sequence[Any], extra_infos: Sequence[Any]) -> None:
    """Batches of unequal length are a caller's bug, not model output: refuse them (outside the net)."""
    n = (len(solution_strs), len(ground_truths), len(extra_infos))
    if len(set(n)) != 1:
        raise ValueError(f"reward batch columns differ in length: {n[0]} solutions, {n[1]} ground truths, {n[2]} extra infos")
