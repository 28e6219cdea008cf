"""Property tests: no input raises, every row has the same keys, every score stays in range."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slca.config.groups.reward import ExactMatchReward, HierRReward, JudgeConfig
from slca.rewards import compute_score
from slca.rewards.hierr import result_keys

from .conftest import block, c, gt, resp

CFG = HierRReward()
W_SUM = CFG.w_format + CFG.w_name + CFG.w_key + CFG.w_value + CFG.w_parallel
KEYS = result_keys(CFG)
UNIT = ("format_score", "name_f1", "key_score", "value_score", "arg_match", "parallel_score", "summary_score", "weighted_score_norm")

FRAGMENTS = st.sampled_from(
    [
        "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>",
        "<thinking>", "</thinking>", "{", "}", "[", "]", '"name"', ":", ",", '"arguments"', '"get_weather"',
        '"search"', '"parameters"', "null", "1e999", '"\\u0000"', "\n", "assistant", " ", '{"a": [', "]]]]",
    ]
)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)
CALLS = st.builds(lambda n, a: {"name": n, "arguments": a}, st.sampled_from(["get_weather", "search", "convert", "nope", ""]), st.dictionaries(st.sampled_from(["city", "q", "v"]), JSONISH, max_size=3))
TEXT = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(FRAGMENTS, st.text(max_size=10)), max_size=40).map("".join),
    st.lists(st.one_of(CALLS.map(lambda x: block(x)), st.lists(CALLS, min_size=2, max_size=3).map(lambda xs: block(*xs)), st.text(max_size=40).map(resp), FRAGMENTS), max_size=6).map("".join),
)
GOLD = st.one_of(
    st.lists(st.lists(st.one_of(CALLS, st.sampled_from(["search", "get_weather"]), JSONISH), max_size=3), max_size=3),
    st.lists(st.one_of(CALLS, st.sampled_from(["search", "get_weather"])), max_size=4),
    CALLS.map(lambda x: json.dumps([x])),
    st.text(max_size=20),
    JSONISH,
)
GT = st.one_of(GOLD.map(gt), JSONISH, st.dictionaries(st.sampled_from(["allowed_tools", "gold_tool_calls", "question_content"]), JSONISH, max_size=3))


def check_row(r, keys=KEYS):
    assert list(r) == keys
    assert not r["error_type"].startswith("internal_error"), r["error_type"]
    for k, v in r.items():
        if k != "error_type":
            assert isinstance(v, (int, float)) and v == v, (k, v)
    for k in UNIT:
        assert 0.0 <= r[k] <= 1.0, (k, r[k])
    assert 0.0 <= r["process_score"] <= W_SUM + 1e-9
    assert r["score"] == CFG.no_call_penalty if r["should_call_but_no_call"] else -1e-9 <= r["score"] <= 2.0 + 1e-9


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT, GOLD)
def test_any_response_against_valid_gold(text, gold):
    check_row(compute_score("d", text, gt(gold)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(TEXT, JSONISH), GT, st.one_of(st.none(), JSONISH))
def test_any_row_never_raises(text, ground_truth, extra_info):
    check_row(compute_score("d", text, ground_truth, extra_info))


@settings(max_examples=100, deadline=None)
@given(TEXT, GOLD)
def test_exact_match_never_raises(text, gold):
    r = compute_score("d", text, gt(gold), reward_config=ExactMatchReward())
    assert r["score"] in (0.0, 1.0) and not r["error_type"].startswith("internal_error")


@settings(max_examples=100, deadline=None)
@given(st.lists(CALLS.filter(lambda x: x["name"] in ("get_weather", "search", "convert")), min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_gold_scores_one_and_order_does_not_matter(calls, rnd):
    cfg = HierRReward(judge=JudgeConfig(name="none", cache_dir=None))
    shuffled = list(calls)
    rnd.shuffle(shuffled)
    a = compute_score("d", block(*calls), gt([calls]), reward_config=cfg)
    b = compute_score("d", block(*shuffled), gt([calls]), reward_config=cfg)
    for k in ("format_score", "name_f1", "key_score", "value_score", "parallel_score"):
        assert a[k] == 1.0 == b[k], k
    assert a == b


def test_pathological_inputs_stay_fast():
    import time

    cases = ["<tool_call>" * 20000, "<think>" * 20000 + "x", "<tool_response>" * 20000, "[" * 50000, block(c("search", q="[" * 10000)), "<tool_call>" + "[" * 5000 + "</tool_call>"]
    t0 = time.perf_counter()
    for text in cases:
        check_row(compute_score("d", text, gt([c("search", q="x")])))
    assert time.perf_counter() - t0 < 5.0
