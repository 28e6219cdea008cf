"""slca's ACEBench reader and checker apply ACEBench's rules (docs/eval.md#table-3-acebench), each case's
verdict worked out by hand from those rules."""

from __future__ import annotations

import math

import pytest

from slca.evaluation.acebench import check, decode
from slca.evaluation.acebench.checker import normal_check, standardize
from slca.evaluation.acebench.data import MULTI_TURN, NORMAL, SPECIAL, Entry
from slca.evaluation.acebench.score import category_accuracy, summary

FLIGHT = {
    "name": "book_flight",
    "description": "Books a flight.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "seats": {"type": "integer"},
            "window": {"type": "boolean"},
            "lat": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "meta": {"type": "object", "properties": {"metrics": {"type": "array"}, "level": {"type": "string"}}},
        },
        "required": ["city"],
    },
}
GOLD = {"book_flight": {"city": "Paris", "seats": 2, "window": True, "lat": 37.98, "tags": ["a", "b"]}}


def _normal(truth: object = GOLD, functions: tuple = (FLIGHT,), category: str = "normal_single_turn_single_function") -> Entry:
    return Entry("x_0", category, "user: hi", functions, "", "", truth)


@pytest.mark.parametrize(("text", "valid", "error"), [
    ("[book_flight(city='Paris', seats=2, window=True, lat=37.98, tags=['a', 'b'])]", True, None),
    # The gold only has to occur inside the output's string.
    ("[book_flight(city='Paris, France', seats=2, window=True, lat=37.98, tags=['a', 'b'])]", True, None),
    ("[book_flight(city='London', seats=2, window=True, lat=37.98, tags=['a', 'b'])]", False, "value_error:string"),
    # Integers are never compared with the gold.
    ("[book_flight(city='Paris', seats=3, window=True, lat=37.98, tags=['a', 'b'])]", True, None),
    # A bare name reads as its text, and "true" counts as a boolean.
    ("[book_flight(city='Paris', seats=2, window=true, lat=37.98, tags=['a', 'b'])]", True, None),
    # "number" means int; a float matches the gold's type and is then not compared at all.
    ("[book_flight(city='Paris', seats=2, window=True, lat=1.5, tags=['a', 'b'])]", True, None),
    ("[book_flight(seats=2)]", False, "lack_args"),
    ("[book_flight(city='Paris', meta={'level': 'x'})]", False, "addition_args"),
    # Gold parameters that are not required may be left out.
    ("[book_flight(city='Paris')]", True, None),
    ("[book_flight(city=5)]", False, "type_error"),
    ("[book_flight(city='Paris', tags=['b', 'a'])]", False, "value_error:list"),
    ("[book_flight(city='Paris', seats='2')]", False, "type_error"),
    ("[book_flight(city='Paris'), book_flight(city='Paris')]", False, "wrong_count"),
    ("[cancel_flight(city='Paris')]", False, "function_mismatch"),
    ("book_flight(city='Paris')", False, "parse:not_a_call_list"),
    ("[book_flight(city='Paris', seats=1+1)]", False, "parse:needs_evaluation"),
    ("Sure! [book_flight(city='Paris')]", False, "parse:syntax_error"),
    ('<tool_call>\n{"name": "book_flight", "arguments": {"city": "Paris"}}\n</tool_call>', True, None),
    ("<think>maybe London</think>[book_flight(city='Paris')]", True, None),
])
def test_a_normal_output_is_judged_by_acebenchs_rules(text: str, valid: bool, error: str | None) -> None:
    assert check(_normal(), text) == (valid, error)


def test_strings_compare_without_spaces_punctuation_or_case_and_lists_item_by_item() -> None:
    assert standardize("New-York, U.S.A_ *^/") == "newyorkusa"
    assert standardize("it's") == 'it"s'
    gold = {"book_flight": {"city": "x", "tags": ["new york", "LA"]}}
    assert check(_normal(gold), "[book_flight(city='x', tags=['New-York', 'l.a.'])]") == (True, None)


def test_a_list_inside_an_object_fails_even_when_it_equals_the_gold_once_whitespace_is_deleted() -> None:
    # ACEBench deletes all whitespace before parsing, then compares str(gold) inside str(output):
    # "['time savings']" is not inside "['timesavings']". Its own gold answers fail this way.
    gold = {"book_flight": {"city": "x", "meta": {"metrics": ["time savings"], "level": "high"}}}
    text = "[book_flight(city='x', meta={'metrics': ['time savings'], 'level': 'high'})]"
    assert check(_normal(gold), text) == (False, "value_error:dict_value")
    one_word = {"book_flight": {"city": "x", "meta": {"metrics": ["cost"], "level": "high"}}}
    assert check(_normal(one_word), "[book_flight(city='x', meta={'metrics': ['cost'], 'level': 'HIGH'})]") == (True, None)


def test_parallel_calls_match_in_any_order_and_a_gold_suffix_names_the_same_function() -> None:
    weather = {"name": "weather", "parameters": {"type": "object", "properties": {"day": {"type": "string"}}, "required": ["day"]}}
    gold = {"book_flight": {"city": "Paris"}, "weather_1": {"day": "mon"}, "weather_2": {"day": "tue"}}
    entry = _normal(gold, (FLIGHT, weather), "normal_single_turn_parallel_function")
    assert check(entry, "[weather(day='tue'), book_flight(city='Paris'), weather(day='mon')]") == (True, None)
    assert check(entry, "[weather(day='tue'), book_flight(city='Paris'), weather(day='tue')]") == (False, "value_error:string")
    # Each gold call needs some output call of its name that passes: one output call may serve two gold calls.
    same = {"weather_1": {"day": "mon"}, "weather_2": {"day": "mon"}}
    assert normal_check((weather,), [("weather", {"day": "mon"}), ("weather", {"day": "sun"})], same, "normal_x") is None


def test_the_schema_is_the_first_function_whose_name_occurs_inside_the_gold_name() -> None:
    search = {"name": "search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": []}}
    flights = {"name": "search_flights", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": []}}
    gold = {"search_flights": {"q": "x"}}
    assert check(_normal(gold, (search, flights)), "[search_flights(q='x')]") == (False, "wrong_function_name")
    assert check(_normal(gold, (flights, search)), "[search_flights(q='x')]") == (True, None)


def test_any_of_several_possible_answers_will_do() -> None:
    entry = _normal([{"book_flight": {"city": "Paris"}}, {"book_flight": {"city": "Rome"}}])
    assert check(entry, "[book_flight(city='Rome')]") == (True, None)
    assert check(entry, "[book_flight(city='Oslo')]") == (False, "value_error:string")


def test_where_acebenchs_own_checker_would_raise_the_output_scores_zero_naming_it() -> None:
    odd = {"name": "odd", "parameters": {"type": "object", "properties": {"v": {"type": "null"}}, "required": []}}
    assert check(_normal({"odd": {"v": "x"}}, (odd,)), "[odd(v='x')]") == (False, "checker:KeyError")


def test_the_decoder_reads_keywords_names_and_nested_calls_and_evaluates_nothing() -> None:
    decoded = decode("[f(1, a=New York, b=g(c=-2), d=x[0], e=(1, 2))]")
    assert decoded.ok and decoded.calls == (("f", {"a": "NewYork", "b": {"g": {"c": -2}}, "d": "x[0]", "e": (1, 2)}),)
    assert decode("[f(a=lambda: 1)]").error == "needs_evaluation"
    assert decode("[f(a={1, 2})]").error == "unsupported_value"
    assert decode("[1]").error == "not_a_call"
    assert decode(None).error == "not_text"
    assert decode("[]").calls == ()


def _special(category: str, truth: object) -> Entry:
    return Entry("s_0", category, "user: hi", (FLIGHT,), "", "", truth)


@pytest.mark.parametrize(("category", "truth", "text", "valid"), [
    ("special_incomplete", {"book_flight": ["city", "seats"]}, "Missing necessary parameters (city, seats) for the api (book_flight)", True),
    ("special_incomplete", {"book_flight": ["city", "seats"]}, "Missing necessary parameters (city) for the api (book_flight)", False),
    ("special_incomplete", {"book_flight": ["city"]}, "Missing necessary parameters (city) for the api (flight)", False),
    ("special_incomplete", {"book_flight": ["city"]}, "missing necessary parameters (city) for the api (book_flight)", False),
    # Gold values are matched as written, stray spaces included.
    ("special_incomplete", {"book_flight": ["city ", " seats"]}, "Missing necessary parameters (city, seats) for the api (book_flight)", False),
    ("special_error_param", {"seats": ["-3"]}, "There is incorrect value (-3) for the parameters (seats) in the conversation history.", True),
    ("special_error_param", {"seats": ["-3"]}, "There is incorrect value (3) for the parameters (seats)", False),
    ("special_irrelevant", "Due to the limitations of the function, I cannot solve this problem.", "Due to the limitations of the function, no.", True),
    ("special_irrelevant", "Due to the limitations of the function, I cannot solve this problem.", "[book_flight(city='x')]", False),
    ("special_irrelevant", "-", "<think>the limitations of the function</think>I cannot.", False),
])
def test_a_special_output_must_point_the_problem_out_in_acebenchs_words(category: str, truth: object, text: str, valid: bool) -> None:
    assert check(_special(category, truth), text)[0] is valid


def test_a_multi_turn_category_counts_a_conversation_only_when_every_turn_is_right() -> None:
    adjust, switch = MULTI_TURN
    entries = [Entry(f"{adjust}_0_0", adjust, "", (FLIGHT,), "", "", GOLD), Entry(f"{adjust}_0_1", adjust, "", (FLIGHT,), "", "", GOLD),
               Entry(f"{adjust}_1_0", adjust, "", (FLIGHT,), "", "", GOLD),
               Entry("normal_atom_bool_0", "normal_atom_bool", "", (FLIGHT,), "", "", GOLD),
               Entry("normal_atom_bool_1", "normal_atom_bool", "", (FLIGHT,), "", "", GOLD)]
    acc = category_accuracy(entries, {0: [True], 1: [False], 2: [True], 3: [True], 4: [False]})
    assert acc[adjust] == 0.5  # conversation 0 has a wrong turn, conversation 1 is right
    assert acc["normal_atom_bool"] == 0.5
    assert math.isnan(acc[switch])
    # Two samples per row: sample k of every turn is taken together.
    acc2 = category_accuracy(entries[:2], {0: [True, True], 1: [False, True]})
    assert acc2[adjust] == 0.5


def test_the_summary_uses_acebenchs_group_weights_over_the_groups_evaluated() -> None:
    accuracy = {**{c: 1.0 for c in NORMAL}, **{c: 0.0 for c in SPECIAL}}
    out = summary(accuracy)
    assert out["normal"] == 1.0 and out["special"] == 0.0
    assert out["summary"] == pytest.approx(0.578 / (0.578 + 0.2676))
    only_normal = summary({**{c: 0.5 for c in NORMAL}, **{c: float("nan") for c in SPECIAL}})
    assert only_normal["summary"] == 0.5 and math.isnan(only_normal["special"])
