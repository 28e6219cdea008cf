"""The five HierR process components, case by case (docs/method.md#process-components)."""

import pytest

from slca.rewards.components import key_value_scores, loose_equal, name_f1, parallel_score
from slca.rewards.gold import GoldCall
from slca.toolcall import ToolCall


def counts(names):
    out = {}
    for n in names:
        out[n] = out.get(n, 0) + 1
    return out


@pytest.mark.parametrize(
    "pred, gold, expected",
    [
        ([], [], 1.0),
        (["a"], [], 0.0),
        ([], ["a"], 0.0),
        (["a"], ["a"], 1.0),
        (["a", "a"], ["a"], 2 * 1 / 3),
        (["a", "b"], ["b", "a"], 1.0),
        (["a", "b", "c"], ["a", "x"], 2 * 1 / 5),
        (["a", "a", "b"], ["a", "a", "a"], 2 * 2 / 6),
    ],
)
def test_name_f1_multiset(pred, gold, expected):
    assert name_f1(pred, counts(gold), len(gold)) == pytest.approx(expected)


@pytest.mark.parametrize(
    "a, b, eq",
    [
        (None, None, True),
        (None, "x", False),
        (0, None, False),
        ("Paris", " paris ", True),
        ("1", 1, True),
        ("1.0", 1, True),
        (0.1 + 0.2, 0.3, True),
        ("3", "3.0000000001", True),
        ("3", "3.00000001", False),
        (True, "true", True),
        ("TRUE", "1", True),
        ("false", 0, True),
        ("0", "false", True),
        ("yes", True, False),
        ([1, 2], [1, 2], True),
        ({"b": 1, "a": 2}, {"a": 2, "b": 1}, True),
        ([2, 1], [1, 2], False),
        ({"a": 1}, [["a", 1]], False),
        ("abc", "abd", False),
        (float("nan"), float("nan"), True),  # via the string rule ("nan" == "nan")
        (float("inf"), "1e999", False),
        (10**400, 10**400, True),
    ],
)
def test_loose_equal(a, b, eq):
    assert loose_equal(a, b) is eq


def call(name, **args):
    return ToolCall(name, args)


def gcall(name, **args):
    return GoldCall(name, args)


def test_key_value_no_gold_args_is_full_marks_even_for_empty_pred():
    assert key_value_scores([], []) == (1.0, 1.0)
    assert key_value_scores([call("zzz", q=1)], []) == (1.0, 1.0)


def test_key_value_empty_pred_is_zero():
    assert key_value_scores([], [gcall("a", x=1)]) == (0.0, 0.0)


def test_key_value_jaccard_and_value_over_gold_keys():
    # K_p = {x, y}, K_g = {x, z}: key = 1/3; value: x matches → 1/|K_g| = 1/2
    k, v = key_value_scores([call("a", x=1, y=2)], [gcall("a", x="1", z=3)])
    assert k == pytest.approx(1 / 3) and v == pytest.approx(1 / 2)


def test_key_value_needs_same_name():
    assert key_value_scores([call("b", x=1)], [gcall("a", x=1)]) == (0.0, 0.0)


def test_key_value_empty_pred_args_scores_zero():
    assert key_value_scores([call("a")], [gcall("a", x=1)]) == (0.0, 0.0)


def test_key_value_greedy_best_and_consumption():
    gold = [gcall("a", x=1, y=2), gcall("a", x=1, y=2)]
    pred = [call("a", x=1, y=9), call("a", x=1, y=2)]
    # gold 1 takes pred 2 (sum 2.0 > 1.5); gold 2 gets pred 1 (key 1, value .5)
    k, v = key_value_scores(pred, gold)
    assert k == pytest.approx(1.0) and v == pytest.approx((1.0 + 0.5) / 2)


def test_key_value_tie_keeps_earlier_and_zero_best_consumes_nothing():
    gold = [gcall("a", x=1), gcall("a", x=2)]
    pred = [call("a", x=5), call("a", x=5)]
    # both preds tie for gold 1 (key 1, value 0): the first is consumed; gold 2 gets the second
    assert key_value_scores(pred, gold) == (1.0, 0.0)
    # a same-name pred sharing no key scores 0 and is not consumed
    gold = [gcall("a", x=1), gcall("a", y=1)]
    pred = [call("a", y=1)]
    assert key_value_scores(pred, gold) == (0.5, 0.5)


def test_key_value_order_insensitive_for_distinct_calls():
    gold = [gcall("a", x=1), gcall("b", y="q")]
    fwd = key_value_scores([call("a", x=1), call("b", y="q")], gold)
    rev = key_value_scores([call("b", y="q"), call("a", x=1)], gold)
    assert fwd == rev == (1.0, 1.0)


def test_parallel():
    assert parallel_score(2, 2) == 1.0
    assert parallel_score(1, 2) == 0.0
    assert parallel_score(0, 0) == 1.0
