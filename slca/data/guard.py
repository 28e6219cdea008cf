"""Values every later step can handle: a depth cap, no lone surrogates, only finite numbers.

Rows and decoded JSON fields come from files we do not control. Python's recursive helpers
(json.dumps, repr, pyarrow conversion) raise RecursionError on deep nesting, and a lone
surrogate (an escaped `\\ud800`, or a byte that is not UTF-8 read with surrogateescape) cannot be
written as UTF-8. NaN and Infinity (a parquet double, a Python literal such as `1e999`) have no
JSON form: orjson would write them as `null`. One iterative walk finds any of them before
anything recurses, so the row is rejected naming the field instead of crashing a writer or
changing a value later (docs/method.md#data).
"""

from __future__ import annotations

import math
from typing import Any

from slca.data.fastjson import non_finite_reason

MAX_DEPTH = 64  # a Toucan row nests ~10 levels (tool schemas included); far below Python's limits
_JSON_SCALARS = (str, int, float, bool, type(None))


def _path(link: Any) -> str:
    parts: list[str] = []
    while link is not None:
        link, key = link
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    text = "".join(reversed(parts)).lstrip(".")
    return text[:120] + "…" if len(text) > 120 else text


def has_surrogate(text: str) -> bool:
    """True when `text` holds a lone surrogate (isascii is O(1), so ASCII text costs nothing)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")  # far faster than a regex scan; fails exactly on surrogates
    except UnicodeEncodeError:
        return True
    return False


def _no_surrogate_escape(text: str) -> bool:
    return "\\ud" not in text and "\\uD" not in text


def decoded_problem(text: str, value: Any) -> tuple[str, str] | None:
    """`problem(value)` for a value decoded from JSON text `text`, doing only the work the text
    leaves open: nothing for short plain text, a depth-only pass when neither the text nor an
    escape in it can have produced a surrogate or a non-finite number, the full walk otherwise.
    (slca.data.fastjson already refuses NaN/Infinity; the stdlib decodes them as floats.)"""
    if has_surrogate(text) or not _no_surrogate_escape(text) or "NaN" in text or "Infinity" in text:
        return problem(value)
    if text.count("[") + text.count("{") < MAX_DEPTH or _within_depth(value):
        return None
    return _locate(value, False)


def _within_depth(value: Any) -> bool:
    """Containers nest at most MAX_DEPTH deep (level by level; strings are not looked at)."""
    level = [value]
    for _ in range(MAX_DEPTH):
        nxt: list[Any] = []
        for v in level:
            t = type(v)
            if t is dict:
                nxt += [x for x in v.values() if type(x) is dict or type(x) is list]
            elif t is list or t is tuple:
                nxt += [x for x in v if type(x) is dict or type(x) is list]
            else:  # only the root can be a scalar here; anything unusual is left to the full walk
                return False
        if not nxt:
            return True
        level = nxt
    return False


def problem(value: Any, *, json_only: bool = False) -> tuple[str, str] | None:
    """(field path, reason) of the first unsafe spot in `value`, or None when it is safe.

    json_only also refuses what JSON cannot hold (sets, bytes, non-string keys...): values
    decoded from Python literals must round-trip through JSON like any other call.
    """
    if _plainly_safe(value, json_only):
        return None
    return _locate(value, json_only)


def _plainly_safe(value: Any, json_only: bool) -> bool:
    """Fast pass over exact builtin types, no paths kept: True means safe; False means "look
    closer" (a problem, or a type this pass does not decide, such as numpy arrays)."""
    stack = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        v, depth = pop()
        t = type(v)
        if t is dict:
            for k in v:
                if type(k) is not str or (not k.isascii() and has_surrogate(k)):
                    return False
            children = v.values()
        elif t is list or t is tuple:
            children = v
        elif t is str:
            if has_surrogate(v):
                return False
            continue
        elif t is float:
            if v - v != 0.0:  # NaN or infinite: inf - inf is NaN
                return False
            continue
        elif v is not None and t is not int and t is not bool:
            return False
        else:
            continue
        if depth >= MAX_DEPTH:
            return False
        depth += 1
        for x in children:
            tx = type(x)
            if tx is str:
                if not x.isascii() and has_surrogate(x):
                    return False
            elif tx is dict or tx is list:
                push((x, depth))
            elif tx is float:
                if x - x != 0.0:
                    return False
            elif x is not None and tx is not int and tx is not bool:
                return False
    return True


def _locate(value: Any, json_only: bool) -> tuple[str, str] | None:
    stack: list[tuple[Any, Any, int]] = [(value, None, 0)]
    while stack:
        v, link, depth = stack.pop()
        if isinstance(v, str):
            if has_surrogate(v):
                return _path(link), "text that is not valid UTF-8 (an undecodable byte or a lone surrogate)"
        elif isinstance(v, dict):
            if depth >= MAX_DEPTH:
                return _path(link), f"nested deeper than {MAX_DEPTH} levels"
            for k, x in v.items():
                if not isinstance(k, str):
                    if json_only:
                        return _path(link), f"key {k!r:.40} is not a string"
                    k = str(k)
                elif has_surrogate(k):
                    return _path(link), "key that is not valid UTF-8 (an undecodable byte or a lone surrogate)"
                stack.append((x, (link, k), depth + 1))
        elif isinstance(v, (list, tuple)):
            if depth >= MAX_DEPTH:
                return _path(link), f"nested deeper than {MAX_DEPTH} levels"
            stack.extend((x, (link, i), depth + 1) for i, x in enumerate(v))
        elif isinstance(v, float) and not math.isfinite(v):
            return _path(link), non_finite_reason(v)
        elif json_only and not isinstance(v, _JSON_SCALARS):
            return _path(link), f"{type(v).__name__} value is not JSON"
        elif hasattr(v, "tolist") and not isinstance(v, _JSON_SCALARS):  # numpy arrays from pandas readers
            stack.append((v.tolist(), link, depth))
    return None
