"""JSON with orjson when it is installed (it ships with tensordict, a verl dependency) and the
stdlib otherwise. Decoding falls back to the stdlib on any orjson error so error messages and
edge cases behave exactly like `json`, with two exceptions that keep every number exact:

* integers of any size decode exactly: orjson would read one outside [-2**63, 2**64) as a float
  (`1e+30`), so a text holding a run of 19 or more digits goes to the stdlib instead;
* NaN, Infinity and numbers beyond a float's range are refused (`NonFiniteNumber`, naming where
  they sit): JSON has no such values, and orjson would write them back as `null`.

Integers longer than Python's conversion limit (4,300 digits) are refused as bad JSON.
"""

from __future__ import annotations

import json
import math
from typing import Any

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None

JSONDecodeError = json.JSONDecodeError

# Every byte becomes " " except the ASCII digits, which become "0": a long digit run is then a
# plain substring search. UTF-8 continuation bytes are >= 0x80, so they never look like digits.
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_DIGIT_RUN = b"0" * 19  # the shortest integer orjson may turn into a float (-9223372036854775809)


class NonFiniteNumber(JSONDecodeError):
    """JSON text holding NaN, Infinity or a number beyond a float's range (JSON has none of them).

    `path` is where the value sits in the decoded document ("" for the document itself, else
    e.g. `arguments.amount` or `[0][1].x`), `reason` says which value it was.
    """

    def __init__(self, path: str, reason: str, doc: str):
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}" if path else reason, doc, 0)

    def __str__(self) -> str:
        return self.msg

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.path, self.reason, self.doc)


def non_finite_reason(value: float) -> str:
    """The one-line reason for refusing a NaN or infinite float."""
    name = "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    return f"{name} is not a finite number (JSON has no NaN or Infinity)"


def _may_hold_long_integer(text: str | bytes) -> bool:
    """True when `text` holds a run of 19+ ASCII digits, the least an integer orjson would read
    as a float needs (~1 ns per byte: one table lookup plus a substring search, both in C)."""
    if len(text) < len(_LONG_DIGIT_RUN):
        return False
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    return _LONG_DIGIT_RUN in raw.translate(_DIGITS_AS_ZERO)


def loads(text: str | bytes) -> Any:
    """Decode JSON; every failure (deep nesting, a number JSON cannot hold included) is a
    JSONDecodeError, a NonFiniteNumber for NaN/Infinity. Integers keep their exact value."""
    if _orjson is not None and not _may_hold_long_integer(text):
        try:
            return _orjson.loads(text)  # orjson refuses NaN, Infinity and overflowing numbers
        except _orjson.JSONDecodeError:
            pass  # let the stdlib decide, and word the error
    try:
        value = json.loads(text)
    except JSONDecodeError:
        raise
    except RecursionError:
        raise JSONDecodeError("nested too deeply to decode", _as_str(text), 0) from None
    except ValueError as exc:  # e.g. an integer over Python's digit limit, bytes that are not UTF-8
        raise JSONDecodeError(" ".join(str(exc).split())[:200], _as_str(text), 0) from None
    found = _first_non_finite(value)
    if found is not None:
        raise NonFiniteNumber(found[0], non_finite_reason(found[1]), _as_str(text))
    return value


def _first_non_finite(value: Any) -> tuple[str, float] | None:
    """(path, value) of the first NaN or infinite float in a decoded document: an iterative walk
    (the stdlib decodes nesting deeper than Python may recurse) that keeps each node's path as a
    (parent, key) link and spells it out only for the value it finds."""
    stack: list[tuple[Any, Any]] = [(value, None)]
    while stack:
        v, link = stack.pop()
        tv = type(v)
        if tv is float:
            if not math.isfinite(v):
                return _spell(link), v
        elif tv is dict:
            stack.extend((x, (link, k)) for k, x in v.items() if type(x) in _WALKED)
        elif tv is list:
            stack.extend((x, (link, k)) for k, x in enumerate(v) if type(x) in _WALKED)
    return None


_WALKED = (float, dict, list)


def _spell(link: Any) -> str:
    """`a.b[0].c` from a chain of (parent, key) links, cut at 120 characters."""
    parts: list[str] = []
    while link is not None:
        link, key = link
        parts.append(f"[{key}]" if type(key) is int else f".{key}")
    text = "".join(reversed(parts)).lstrip(".")
    return text[:120] + "…" if len(text) > 120 else text


def _as_str(text: str | bytes) -> str:
    return text.decode("utf-8", "replace") if isinstance(text, (bytes, bytearray)) else text


def dumps_compact(value: Any) -> str:
    """Compact JSON text, non-ASCII kept as is (integers beyond 64 bits exactly, via the stdlib)."""
    if _orjson is not None:
        try:
            return _orjson.dumps(value).decode("utf-8")
        except TypeError:
            pass
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def dumps_line(value: Any, default: Any = None) -> bytes:
    """One JSON Lines record as UTF-8 bytes, newline included (integers beyond 64 bits exactly)."""
    if _orjson is not None:
        try:
            return _orjson.dumps(value, default=default, option=_orjson.OPT_APPEND_NEWLINE)
        except TypeError:
            pass
    return (json.dumps(value, ensure_ascii=False, default=default, separators=(",", ":")) + "\n").encode("utf-8")
