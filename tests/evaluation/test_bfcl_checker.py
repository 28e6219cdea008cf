"""slca's BFCL checker: each documented matching rule on a hand-written entry, both accepted output
formats, and hostile model output that scores invalid with a reason and never raises."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slca.evaluation.bfcl import CATEGORIES, check, decode, to_tool

# A BFCL-dialect function list: "dict" objects, "float" numbers, an enum-like string, arrays, a dict.
FUNCTIONS = [
    {
        "name": "weather.forecast",
        "description": "Forecast for a city.",
        "parameters": {
            "type": "dict",
            "properties": {
                "city": {"type": "string", "description": "City name."},
                "days": {"type": "integer", "description": "Days ahead."},
                "threshold": {"type": "float", "description": "Rain threshold."},
                "metric": {"type": "boolean", "description": "Metric units."},
                "hours": {"type": "array", "items": {"type": "integer"}, "description": "Hours of day."},
                "weights": {"type": "array", "items": {"type": "float"}, "description": "Weights."},
                "place": {"type": "dict", "description": "Coordinates.", "properties": {
                    "lat": {"type": "float"}, "lon": {"type": "float"}, "label": {"type": "string"}}},
            },
            "required": ["city", "days"],
        },
    },
    {
        "name": "news",
        "description": "Headlines.",
        "parameters": {"type": "dict", "properties": {"topic": {"type": "string"}}, "required": ["topic"]},
    },
]
GOLD = [{"weather.forecast": {
    "city": ["New York, NY", "NYC"], "days": [3], "threshold": [0.5, ""], "metric": [True, ""],
    "hours": [[9, 12], ""], "weights": [[1.0, 2.0], ""],
    "place": [{"lat": [40.0], "lon": [-74.0], "label": ["", "home"]}, ""],
}}]
PARALLEL_GOLD = [{"news": {"topic": ["sports"]}}, {"news": {"topic": ["politics"]}}, {"weather.forecast": {"city": ["Oslo"], "days": [1]}}]


def simple(text: str) -> tuple[bool, str | None]:
    return check(FUNCTIONS, text, GOLD, "live_multiple")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[weather.forecast(city='New York, NY', days=3)]", (True, None)),
        ("weather.forecast(city='NYC', days=3)", (True, None)),  # one bare call, second possible answer
        ("[weather.forecast(city='new york ny', days=3)]", (True, None)),  # case, spaces and punctuation ignored
        ("[weather.forecast(city=\"New-York/NY.\", days=3)]", (True, None)),
        ("[weather.forecast(city='Boston', days=3)]", (False, "value_error")),
        ("[weather.forecast(city='NYC')]", (False, "missing_required")),
        ("[weather.forecast(city='NYC', days=3, units='C')]", (False, "unexpected_param")),
        ("[weather.forecast(city='NYC', days=3.0)]", (False, "type_error")),  # a float is no integer
        ("[weather.forecast(city='NYC', days=True)]", (False, "type_error")),  # nor is a bool
        ("[weather.forecast(city='NYC', days='3')]", (False, "type_error")),
        ("[weather.forecast(city='NYC', days=3, threshold=0.5)]", (True, None)),
        ("[weather.forecast(city='NYC', days=3, threshold=0.6)]", (False, "value_error")),
        ("[weather.forecast(city='NYC', days=3, metric=True)]", (True, None)),
        ("[weather.forecast(city='NYC', days=3, metric=1)]", (False, "type_error")),
        ("[weather.forecast(city='NYC', days=3, hours=[9, 12])]", (True, None)),
        ("[weather.forecast(city='NYC', days=3, hours=[12, 9])]", (False, "value_error")),  # lists keep their order
        ("[weather.forecast(city='NYC', days=3, hours=(9, 12))]", (True, None)),  # a tuple is a list
        ("[weather.forecast(city='NYC', days=3, hours=[])]", (True, None)),  # optional given empty = left out
        ("[weather.forecast(city='NYC', days=3, weights=[1, 2])]", (True, None)),  # int for float, inside lists too
        ("[weather.forecast(city='NYC', days=3, place={'lat': 40, 'lon': -74.0})]", (True, None)),
        ("[weather.forecast(city='NYC', days=3, place={'lat': 40.0, 'lon': -74.0, 'label': 'HOME'})]", (True, None)),
        ("[weather.forecast(city='NYC', days=3, place={'lat': 40.0})]", (False, "value_error")),  # lon not optional
        ("[weather.forecast(city='NYC', days=3, place={'lat': 40.0, 'lon': -74.0, 'alt': 3})]", (False, "value_error")),
        ("[weather.forecast(city='NYC', days=3), news(topic='x')]", (False, "wrong_count")),
        ("[news(topic='x')]", (False, "wrong_name")),
        ("", (False, "no_call")),
        ("[]", (False, "no_call")),
        ("The forecast needs a city.", (False, "parse:syntax_error")),
        ("[weather.forecast('NYC', 3)]", (False, "parse:positional_args")),
        ("[weather.forecast(city=NYC, days=3)]", (False, "parse:bad_arguments")),  # names are not values
        ("[weather.forecast(city='NYC', days=1+2)]", (False, "parse:bad_arguments")),  # nothing is evaluated
        ('<tool_call>\n{"name": "weather.forecast", "arguments": {"city": "NYC", "days": 3}}\n</tool_call>', (True, None)),
        ('<think>NYC, 3 days</think><tool_call>[{"name": "weather.forecast", "arguments": {"city": "NYC", "days": 3}}]</tool_call>',
         (True, None)),
        ('<tool_call>{"name": "weather.forecast", "arguments": {"city": "NYC", "days": 3.5}}</tool_call>', (False, "type_error")),
        ('<tool_call>{"name": "weather.forecast", "arguments": {"city": "NYC"</tool_call>', (False, "parse:json_error")),
        ('<tool_call>{"name": "weather.forecast", "arguments": {"city": "NYC", "days": 3}}', (False, "parse:unclosed_tool_call")),
        ("```python\n[weather.forecast(city='NYC', days=3)]\n```", (True, None)),
    ],
)
def test_each_matching_rule_gives_the_verdict_and_error_kind_worked_out_by_hand(text: str, expected: tuple[bool, str | None]) -> None:
    assert simple(text) == expected


def test_a_parameter_not_in_the_gold_is_unexpected_even_when_the_schema_has_it() -> None:
    gold = [{"weather.forecast": {"city": ["NYC"], "days": [3]}}]
    assert check(FUNCTIONS, "[weather.forecast(city='NYC', days=3, metric=True)]", gold, "simple") == (False, "unexpected_param")


def test_a_gold_parameter_without_the_optional_marker_must_be_given() -> None:
    gold = [{"weather.forecast": {"city": ["NYC"], "days": [3], "metric": [False]}}]
    assert check(FUNCTIONS, "[weather.forecast(city='NYC', days=3)]", gold, "simple") == (False, "missing_optional")


def test_a_gold_answer_written_as_a_string_for_a_number_accepts_that_string_as_written() -> None:
    # BFCL writes a variable name as a string where the schema says integer.
    gold = [{"weather.forecast": {"city": ["NYC"], "days": ["n_days"]}}]
    assert check(FUNCTIONS, "[weather.forecast(city='NYC', days='n_days')]", gold, "simple") == (True, None)
    assert check(FUNCTIONS, "[weather.forecast(city='NYC', days='N_Days')]", gold, "simple") == (False, "value_error")


def test_parallel_calls_match_the_gold_in_any_order_one_to_one() -> None:
    calls = ["news(topic='politics')", "weather.forecast(city='Oslo', days=1)", "news(topic='sports')"]
    assert check(FUNCTIONS, "[" + ", ".join(calls) + "]", PARALLEL_GOLD, "parallel_multiple") == (True, None)
    assert check(FUNCTIONS, "[" + ", ".join(reversed(calls)) + "]", PARALLEL_GOLD, "live_parallel_multiple") == (True, None)
    twice = ["news(topic='sports')", "news(topic='sports')", "weather.forecast(city='Oslo', days=1)"]
    assert check(FUNCTIONS, "[" + ", ".join(twice) + "]", PARALLEL_GOLD, "parallel_multiple") == (False, "no_match")
    assert check(FUNCTIONS, "[" + ", ".join(calls[:2]) + "]", PARALLEL_GOLD, "parallel_multiple") == (False, "wrong_count")
    # Three hermes blocks read as three parallel calls.
    blocks = "\n".join(
        f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>"
        for n, a in [("news", {"topic": "sports"}), ("weather.forecast", {"city": "Oslo", "days": 1}), ("news", {"topic": "politics"})]
    )
    assert check(FUNCTIONS, blocks, PARALLEL_GOLD, "parallel") == (True, None)


def test_parallel_matching_finds_a_full_assignment_where_first_fit_would_fail() -> None:
    # Gold 0 accepts either topic, gold 1 only "sports": first fit gives call 0 ("sports") to gold 0
    # and leaves nothing for gold 1; the one-to-one assignment exists.
    gold = [{"news": {"topic": ["sports", "politics"]}}, {"news": {"topic": ["sports"]}}]
    assert check(FUNCTIONS, "[news(topic='sports'), news(topic='politics')]", gold, "parallel") == (True, None)


def test_irrelevance_is_valid_exactly_when_no_call_is_read() -> None:
    for text in ("", "[]", "None of these functions can tell the time.", "<tool_call>not json</tool_call>", "[news(topic=)"):
        assert check(FUNCTIONS, text, None, "irrelevance") == (True, None), text
    assert check(FUNCTIONS, "[news(topic='time')]", None, "live_irrelevance") == (False, "called_when_irrelevant")
    assert check(FUNCTIONS, '<tool_call>{"name": "news", "arguments": {}}</tool_call>', [], "irrelevance") == (False, "called_when_irrelevant")


def test_relevance_is_valid_exactly_when_some_call_is_read() -> None:
    assert check(FUNCTIONS, "[news(topic='anything')]", None, "live_relevance") == (True, None)
    assert check(FUNCTIONS, "[unknown_function(x=1)]", None, "live_relevance") == (True, None)
    assert check(FUNCTIONS, "I cannot.", None, "live_relevance") == (False, "parse:syntax_error")
    assert check(FUNCTIONS, "[]", None, "live_relevance") == (False, "no_call")


def test_converted_tools_score_the_same_as_bfcls_own_schemas() -> None:
    tools = [to_tool(f) for f in FUNCTIONS]
    for text in ("[weather.forecast(city='NYC', days=3, weights=[1, 2.0])]", "[weather.forecast(city='NYC', days=3.0)]",
                 "[weather.forecast(city='NYC', days=3, place={'lat': 40, 'lon': -74})]"):
        assert check(tools, text, GOLD, "simple") == check(FUNCTIONS, text, GOLD, "simple")


def test_every_category_has_a_rule_and_an_unknown_category_is_named() -> None:
    assert len(CATEGORIES) == 11
    with pytest.raises(KeyError, match="unknown BFCL category 'exec_simple'"):
        check(FUNCTIONS, "", None, "exec_simple")


def test_decode_reads_both_formats_into_the_same_calls() -> None:
    py = decode("[news(topic='a'), weather.forecast(city='b', days=2)]")
    hermes = decode('<tool_call>[{"name": "news", "arguments": {"topic": "a"}}, '
                    '{"name": "weather.forecast", "arguments": {"city": "b", "days": 2}}]</tool_call>')
    assert py.ok and hermes.ok and py.calls == hermes.calls and len(py.calls) == 2


HOSTILE = [
    None, 42, b"[news(topic='x')]", "[" * 10_000, "(" * 500 + ")" * 500, "x" * 300_000,
    "[__import__('os').system('touch /tmp/slca_pwned')]", "[news(topic=open('/etc/passwd').read())]",
    "[news(topic=(lambda: 1)())]", "[news(topic=[x for x in range(10**9)])]", "[news(topic=9**9**9)]",
    "[news(**{'topic': 'x'})]", "[news(topic='x', topic='y')]", "[(news)(topic='x')]", "[news.__class__(topic='x')]",
    '<tool_call>{"name": "news", "arguments": "{\\"topic\\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\"}</tool_call>',
    '<tool_call>{"name": 5, "arguments": {}}</tool_call>', "<tool_call></tool_call>", "<think>unclosed [news(topic='x')]",
    '<tool_call>{"name": "news", "arguments": {"topic": NaN}}</tool_call>', "[news(topic={'a': {1, 2}})]",
    "[weather.forecast(city='NYC', days=3, place={('a',): 1})]", "\udcff[news(topic='x')]",
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_outputs_score_invalid_with_a_reason_and_run_nothing(text: object) -> None:
    for category in CATEGORIES.names():
        gold = PARALLEL_GOLD if CATEGORIES.get(category).rule == "parallel" else GOLD
        ok, kind = check(FUNCTIONS, text, gold, category)
        if CATEGORIES.get(category).rule in ("single", "parallel"):
            assert not ok and kind, (category, kind)
        assert ok == (kind is None)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(["weather.forecast", "news", "other", ""]),
    args=st.dictionaries(st.sampled_from(["city", "days", "threshold", "metric", "hours", "weights", "place", "topic", "x"]),
                         _json_values, max_size=6),
    style=st.sampled_from(["hermes", "pythonic"]),
)
def test_any_call_content_gets_a_verdict_in_every_category_without_raising(name: str, args: dict, style: str) -> None:
    text = (f"<tool_call>{json.dumps({'name': name, 'arguments': args})}</tool_call>" if style == "hermes"
            else f"[{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")]")
    for category in CATEGORIES.names():
        gold = PARALLEL_GOLD if CATEGORIES.get(category).rule == "parallel" else GOLD
        ok, kind = check(FUNCTIONS, text, gold, category)
        assert isinstance(ok, bool) and ok == (kind is None)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("[](){}<>'\",=:._ abcnewstopic0123456789\\/tool_call")), max_size=120))
def test_arbitrary_text_gets_a_verdict_without_raising(text: str) -> None:
    for category in ("simple", "parallel", "irrelevance", "live_relevance"):
        ok, kind = check(FUNCTIONS, text, PARALLEL_GOLD if category == "parallel" else GOLD, category)
        assert ok == (kind is None)
