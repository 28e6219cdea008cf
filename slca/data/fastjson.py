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


def loads(text: str | bytes) -> Any:
    """Decode JSON; every failure (deep nesting, huge integers included) is a JSONDecodeError."""
    if _orjson is not None:
        try:
            return _orjson.loads(text)
        except _orjson.JSONDecodeError:
            pass  # let the stdlib decide, and word the error
    try:
        return json.loads(text)
    except JSONDecodeError:
        raise
    except RecursionError:
        raise JSONDecodeError("nested too deeply to decode", _as_str(text), 0) from None
    except ValueError as exc:  # e.g. an integer over Python's digit limit, bytes that are not UTF-8
        raise JSONDecodeError(" ".join(str(exc).split())[:200], _as_str(text), 0) from None


def _as_str(text: str | bytes) -> str:
    return text.decode("utf-8", "replace") if isinstance(text, (bytes, bytearray)) else text


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
