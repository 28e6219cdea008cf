"""The one error type a bad spec raises: a single line naming the config path and what is allowed."""

from __future__ import annotations


class SpecError(ValueError):
    """A spec that cannot be composed or validated. `str()` is the whole user-facing message."""
