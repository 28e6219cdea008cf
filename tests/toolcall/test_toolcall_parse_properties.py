"""Property tests: the parsers never raise, and valid output always has the documented shape."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slca.toolcall import ParseResult, ToolCall, parse_hermes, parse_pythonic, strip_thinking

TOKENS = [
    "<tool_call>", "</tool_call>", "<think>", "</think>", "<thinking>", "</thinking>",
    "{", "}", "[", "]", "(", ")", '"', "'", ":", ",", "\\", "=", ".",
    '"name"', '"arguments"', '"parameters"', "null", "true", "1e999", "-", "f", "g.h", "x=1", "__import__",
    "\n", " ", "\x00", "\ud800",
]
garbage = st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=5)), max_size=60).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=6,
)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ROUNDTRIP = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_shape(r: ParseResult) -> None:
    assert isinstance(r, ParseResult)
    assert r.n_valid <= len(r.blocks) and r.denom >= 0
    for c in r.calls:
        assert isinstance(c, ToolCall) and isinstance(c.name, str) and c.name
        assert isinstance(c.arguments, dict)
    for b in r.blocks:
        assert (b.calls is None) == (b.error is not None)


@FAST
@given(garbage)
def test_hermes_never_raises_on_garbage(text):
    check_shape(parse_hermes(text))
    check_shape(parse_hermes(f"<tool_call>{text}</tool_call>"))


@FAST
@given(garbage)
def test_pythonic_never_raises_on_garbage(text):
    check_shape(parse_pythonic(text))
    check_shape(parse_pythonic(f"[f(a={text})]"))


@FAST
@given(st.text(max_size=200))
def test_parsers_never_raise_on_any_text(text):
    check_shape(parse_hermes(text))
    check_shape(parse_pythonic(text))
    assert len(strip_thinking(text)) <= len(text)


@FAST
@given(st.integers(min_value=1, max_value=3000), st.sampled_from(["[", "{", "(", '{"a":', "[{", "f(a="]))
def test_nested_garbage_never_raises(depth, opener):
    body = opener * depth
    for text in (body, body + "]" * depth, f"<tool_call>{body}</tool_call>"):
        check_shape(parse_hermes(text, max_depth=8))
        check_shape(parse_pythonic(text, max_depth=8))


@ROUNDTRIP
@given(st.lists(st.tuples(st.text(min_size=1, max_size=10), st.dictionaries(st.text(max_size=6), json_values, max_size=4)), min_size=1, max_size=4))
def test_hermes_roundtrip_of_valid_calls(calls):
    payload = [{"name": n, "arguments": a} for n, a in calls]
    text = "<tool_call>" + json.dumps(payload) + "</tool_call>"
    r = parse_hermes(text, max_depth=64)
    if any(tag in json.dumps(payload) for tag in ("tool_call>", "<think")):
        return  # tags inside strings legitimately change block boundaries or get stripped
    expected = [ToolCall(n, a) for n, a in calls]
    # Arguments use "first truthy": an empty dict stays {}, which equals the input.
    assert r.calls == expected and r.n_valid == 1 and r.denom == 1


@ROUNDTRIP
@given(st.lists(st.tuples(st.from_regex(r"[a-z_][a-z0-9_]{0,6}(\.[a-z_][a-z0-9_]{0,6}){0,2}", fullmatch=True), st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,5}", fullmatch=True), json_values, max_size=3)), min_size=1, max_size=3))
def test_pythonic_roundtrip_of_literal_calls(calls):
    import keyword

    if any(keyword.iskeyword(part) for n, a in calls for part in [*n.split("."), *a]):
        return
    text = "[" + ", ".join(f"{n}(" + ", ".join(f"{k}={v!r}" for k, v in a.items()) + ")" for n, a in calls) + "]"
    r = parse_pythonic(text, max_depth=64)
    assert r.calls == [ToolCall(n, a) for n, a in calls]


python_keys = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=4))
python_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(python_keys, inner, max_size=3),
    max_leaves=8,
)


@FAST
@given(python_values)
def test_canonical_json_never_raises_and_ignores_key_order(value):
    from slca.toolcall.types import canonical_json

    text = canonical_json(value)
    assert isinstance(text, str)
    if isinstance(value, dict):
        assert canonical_json(dict(reversed(list(value.items())))) == text


@FAST
@given(json_values)
def test_canonical_json_of_plain_json_is_sorted_key_json(value):
    from slca.toolcall.types import canonical_json

    assert canonical_json(value) == json.dumps(value, sort_keys=True, ensure_ascii=False)


def test_canonical_json_handles_what_json_cannot_sort_or_write():
    from slca.toolcall.types import canonical_json

    assert canonical_json({1: 2, None: 3}) == canonical_json({None: 3, 1: 2}) != canonical_json({1: 2})
    assert canonical_json({"a": 10**5000}) == canonical_json({"a": 10**5000}) != canonical_json({"a": 10**5000 + 1})
    assert canonical_json([1]) != canonical_json([1.0])  # exact match tells 1 and 1.0 apart


def test_pythonic_literal_with_an_unhashable_key_is_an_invalid_block_not_an_exception():
    for text in ("[f(a={{1: 2}: 3})]", "[f(a={[1]: 2})]"):
        r = parse_pythonic(text)
        assert r.n_valid == 0 and r.blocks[0].error == "bad_arguments"
    assert parse_pythonic("[f(a={1: 2, None: 3, (4, 5): 6})]").blocks[0].error == "bad_arguments"  # a tuple key is a list: no JSON key
    assert parse_pythonic("[f(a={1: 2, None: 3})]").calls[0].arguments == {"a": {1: 2, None: 3}}
