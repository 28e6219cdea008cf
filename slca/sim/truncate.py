"""Observation length cap (docs/method.md#tool-simulators, side "middle"): characters, not tokens."""

from __future__ import annotations

MARKER = "...(truncated)..."


def truncate_middle(text: str, limit: int) -> tuple[str, bool]:
    """Keep the first limit//2 and the last limit//2 characters around MARKER when len(text) > limit.

    As in the reference, the result is limit//2·2 + len(MARKER) characters long, so it can
    exceed `limit` by the marker.
    """
    if len(text) <= limit:
        return text, False
    half = limit // 2
    return text[:half] + MARKER + (text[-half:] if half else ""), True
