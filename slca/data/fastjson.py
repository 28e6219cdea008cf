"""JSON with orjson when it is installed (it ships with tensordict, a verl dependency) and the
stdlib otherwise. Decoding falls back to the stdlib on any orjson error so error messages and
edge cases (NaN literals, huge integers) behave exactly like `json`."""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None

JSONDecodeError = json.JSONDecodeError


def loads(text: str) -> Any:
    if _orjson is not None:
        try:
            return _orjson.loads(text)
        except _orjson.JSONDecodeError:
            pass  # let the stdlib decide, and word the error
    return json.loads(text)


def dumps_compact(value: Any) -> str:
    """Compact JSON text, non-ASCII kept as is."""
    if _orjson is not None:
        try:
            return _orjson.dumps(value).decode("utf-8")
        except TypeError:
            pass
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def dumps_line(value: Any, default: Any = None) -> bytes:
    """One JSON Lines record as UTF-8 bytes, newline included."""
    if _orjson is not None:
        try:
            return _orjson.dumps(value, default=default, option=_orjson.OPT_APPEND_NEWLINE)
        except TypeError:
            pass
    return (json.dumps(value, ensure_ascii=False, default=default) + "\n").encode("utf-8")
