"""The value guard: a depth cap, no lone surrogates and no NaN/Infinity, found by an iterative walk
that never recurses, checked against a recursive oracle on generated values."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from slca.data import guard

MAX = guard.MAX_DEPTH
SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
TEXT = st.text(max_size=8) | st.text(st.characters(codec="utf-8") | SURROGATES, max_size=6)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | TEXT
VALUES = st.recursive(SCALARS, lambda c: st.lists(c, max_size=4) | st.dictionaries(TEXT, c, max_size=4), max_leaves=25)


def _nest(value, levels: int, kind: str):
    for k in range(levels):
        value = [value] if (kind == "list" or (kind == "mixed" and k % 2)) else {"k": value}
    return value


def _depth(v) -> int:  # the oracle: containers on the deepest path
    if isinstance(v, dict):
        return 1 + max((_depth(x) for x in v.values()), default=0)
    if isinstance(v, list):
        return 1 + max((_depth(x) for x in v), default=0)
    return 0


def _has_non_finite(v) -> bool:
    if isinstance(v, float):
        return not math.isfinite(v)
    if isinstance(v, dict):
        return any(_has_non_finite(x) for x in v.values())
    if isinstance(v, list):
        return any(_has_non_finite(x) for x in v)
    return False


def _has_surrogate(v) -> bool:
    if isinstance(v, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in v)
    if isinstance(v, dict):
        return any(_has_surrogate(k) or _has_surrogate(x) for k, x in v.items())
    if isinstance(v, list):
        return any(_has_surrogate(x) for x in v)
    return False


@settings(max_examples=400, deadline=None)
@given(VALUES, st.integers(0, MAX + 3), st.sampled_from(["list", "dict", "mixed"]))
def test_guard_accepts_exactly_the_finite_values_within_the_depth_cap_and_free_of_surrogates(value, levels, kind):
    v = _nest(value, levels, kind)
    expected_ok = _depth(v) <= MAX and not _has_surrogate(v) and not _has_non_finite(v)
    found = guard.problem(v)
    assert (found is None) == expected_ok, (found, _depth(v))
    if found is not None and not _has_surrogate(v) and not _has_non_finite(v):
        assert "deeper than" in found[1]
    # the fast pass and the locating pass agree on builtin values
    assert guard._plainly_safe(v, False) == (guard._locate(v, False) is None)


def test_the_cap_is_exact_at_the_boundary():
    assert guard.problem(_nest("x", MAX, "list")) is None
    assert guard.problem(_nest("x", MAX + 1, "list"))[1] == f"nested deeper than {MAX} levels"
    assert guard.problem({"a": _nest(1, MAX + 1, "dict")})[0].startswith("a.k.k")


def test_ten_thousand_levels_are_reported_never_raised():
    for kind in ("list", "dict", "mixed"):
        field, reason = guard.problem({"conversations": _nest("x", 10_000, kind)})
        assert field.startswith("conversations") and len(field) <= 121 and "deeper than" in reason


def test_the_path_names_the_bad_field():
    row = {"conversations": [{"from": "human", "value": "ok"}, {"from": "gpt", "value": "bad \udcff byte"}]}
    assert guard.problem(row) == ("conversations[1].value", "text that is not valid UTF-8 (an undecodable byte or a lone surrogate)")
    assert guard.problem({"a": {"b\ud800": 1}})[0] == "a"
    assert guard.problem("\ud800")[0] == ""


def test_nan_and_infinity_are_refused_naming_their_field():
    for bad in (float("nan"), float("inf"), -float("inf")):
        field, reason = guard.problem({"extra_info": {"index": bad}})
        assert field == "extra_info.index" and "not a finite number" in reason
    assert guard.problem({"a": [1.5, 1e308, -0.0]}) is None


def test_json_only_refuses_what_json_cannot_hold():
    for bad in ({"a": {1, 2}}, {"a": b"x"}, {"a": 1j}, {1: "x"}, [Ellipsis]):
        assert guard.problem(bad, json_only=True) is not None, bad
        assert guard.problem(bad) is None, bad  # rows from parquet/JSON never hold these; only literals are checked
    assert guard.problem({"a": (1, "x"), "b": [None, True, 1.5]}, json_only=True) is None


@settings(max_examples=400, deadline=None)
@given(VALUES, st.integers(0, MAX + 3), st.sampled_from(["list", "dict", "mixed"]), st.booleans())
def test_the_shortcut_for_decoded_json_finds_exactly_what_the_full_walk_finds(value, levels, kind, ascii_only):
    v = _nest(value, levels, kind)
    try:
        text = json.dumps(v, ensure_ascii=ascii_only)  # lone surrogates: escaped, or raw in the text
    except RecursionError:
        return
    decoded = json.loads(text)
    assert (guard.decoded_problem(text, decoded) is None) == (guard.problem(decoded) is None)


def test_the_shortcut_never_trusts_a_deep_or_escaped_text():
    deep = "[" * (MAX + 1) + "]" * (MAX + 1)
    assert "deeper than" in guard.decoded_problem(deep, json.loads(deep))[1]
    escaped = json.dumps({"v": "\ud800"})
    assert guard.decoded_problem(escaped, json.loads(escaped))[0] == "v"
    assert guard.decoded_problem('"\ud800"', "\ud800") is not None  # a raw surrogate in the text itself
