"""Binary exact-match reward (efficiency paper, eq. 8)."""

import pytest

from slca.config.groups.reward import ExactMatchReward, HierRReward
from slca.rewards import REWARDS, compute_score
from slca.rewards.exact_match import ExactMatch
from slca.rewards.hierr import HierR, result_keys

from .conftest import block, c, gt, resp

GOLD = [[c("get_weather", city="Paris", unit="c"), c("search", q="x")]]
EM = ExactMatchReward()


def em(text, gold=GOLD, cfg=EM):
    return compute_score("d", text, gt(gold), None, reward_config=cfg)


def test_exact_match_multiset_any_order_and_split():
    assert em(block(c("search", q="x"), c("get_weather", unit="c", city="Paris")))["score"] == 1.0
    # same calls spread over two blocks still match as a multiset
    r = em(block(c("search", q="x")) + resp("r") + block(c("get_weather", city="Paris", unit="c")))
    assert r["score"] == 1.0 and r["success"] == 1 and r["exact_match"] == 1 and r["error_type"] == ""


@pytest.mark.parametrize(
    "text, reason",
    [
        (block(c("search", q="x")), "calls_differ"),
        (block(c("search", q="x"), c("get_weather", city="Paris", unit="C")), "calls_differ"),
        (block(c("search", q="x"), c("search", q="x"), c("get_weather", city="Paris", unit="c")), "calls_differ"),
        (block(c("search", q="x"), c("get_weather", city="Paris", unit="c")) + "</tool_call>", "unbalanced_tags"),
        (block(c("search", q="x"), c("get_weather", city="Paris", unit="c")) + "<tool_call>{bad}</tool_call>", "invalid_block:json_error"),
        (block(c("nope", q="x")), "invalid_block:tool_not_found"),
        ("no calls", "calls_differ"),
    ],
)
def test_mismatch_reasons(text, reason):
    r = em(text)
    assert r["score"] == 0.0 and r["error_type"] == reason


def test_think_required_only_when_configured():
    text = block(c("search", q="x"), c("get_weather", city="Paris", unit="c"))
    cfg = ExactMatchReward(require_think=True)
    assert em(text, cfg=cfg)["error_type"] == "missing_think"
    assert em("<think>ok</think>" + text, cfg=cfg)["score"] == 1.0


def test_unbalanced_allowed_without_tag_requirement():
    text = block(c("search", q="x"), c("get_weather", city="Paris", unit="c")) + "</tool_call>"
    assert em(text, cfg=ExactMatchReward(require_tool_tags=False))["score"] == 1.0


def test_no_call_needed_and_none_made():
    assert em("I can answer directly.", gold=[])["score"] == 1.0


def test_names_only_gold_compares_names():
    assert em(block(c("search", q="anything")), gold=["search"])["score"] == 1.0
    r = em(block(c("search", q="anything")), gold=["search"])
    assert r["gold_names_only"] == 1


def test_rows_carry_hierr_diagnostics_and_stable_keys():
    r = em(block(c("search", q="x"), c("get_weather", city="Paris", unit="c")))
    assert r["name_f1"] == 1.0 and r["process_score"] == pytest.approx(1.0)
    keys = set(result_keys(HierRReward())) | {"exact_match"}
    assert set(r) == keys
    assert set(em("nothing", gold=[])) == keys
    bad = compute_score("d", "x", "not a dict", None, reward_config=EM)
    assert set(bad) == keys and bad["score"] == 0.0 and bad["error_type"] == "invalid_ground_truth"


def test_the_reward_registry_builds_both_scorers_by_name_and_refuses_an_unknown_one():
    assert REWARDS.get("exact_match") is ExactMatch and REWARDS.get("hierr") is HierR
    with pytest.raises(KeyError):
        REWARDS.get("nope")
