"""HierR reward rows, docs/method.md#hierr-reward case by case."""

import math

import pytest

from slca.config.groups.reward import HierRReward, JudgeConfig
from slca.rewards import compute_score, compute_score_batch
from slca.rewards.hierr import result_keys, score_process

from .conftest import TOOLS, block, c, gt, resp

W = dict(fmt=0.10, name=0.25, key=0.15, value=0.20, par=0.30)
GOLD = [[c("get_weather", city="Paris", unit="c")], [c("search", q="umbrella")]]
WEATHER = '{"temp": 21.5, "condition": "sunny", "city": "Paris"}'
GOOD = (
    "<think>plan</think>"
    + block(c("get_weather", city="Paris", unit="c"))
    + resp(WEATHER)
    + block(c("search", q="umbrella"))
    + resp('{"hits": ["Umbrella Store Rivoli"]}')
    + "It is sunny in Paris at 21.5 degrees; Umbrella Store Rivoli sells umbrellas."
)


def score(text, ground_truth, cfg=None, extra_info=None):
    return compute_score("toucan_toolcall", text, ground_truth, extra_info, reward_config=cfg)


def test_gold_output_scores_one_on_every_component(cfg_none):
    r = score(GOOD, gt(GOLD), cfg_none)
    for k in ("format_score", "name_f1", "key_score", "value_score", "parallel_score", "arg_match"):
        assert r[k] == 1.0, k
    assert r["process_score"] == pytest.approx(1.0)
    assert r["format_passed"] == 1 and r["error_type"] == ""
    assert (r["tag_open_n"], r["tag_close_n"], r["tag_denom"], r["tag_valid_pair_n"]) == (2, 2, 2, 2)
    assert (r["pred_tool_count"], r["gold_tool_count"], r["first_step_pred_count"], r["first_step_gold_count"]) == (2, 2, 1, 1)
    assert r["tool_success@1.0"] == 1


def test_gold_output_with_grounding_judge_reaches_success():
    r = score(GOOD, gt(GOLD))
    assert r["summary_score"] == 1.0 and r["score"] == pytest.approx(2.0)
    assert r["weighted_score_norm"] == pytest.approx(1.0) and r["success@1.0"] == 1 and r["success"] == 1


def test_thinking_is_stripped_before_counting():
    text = "<think><tool_call>{bad}</tool_call></think>" + block(c("get_weather", city="Paris", unit="c")) + resp(WEATHER) + "Sunny, 21.5."
    r = score(text, gt([c("get_weather", city="Paris", unit="c")]))
    assert r["tag_open_n"] == 1 and r["format_score"] == 1.0


def test_format_score_is_valid_blocks_over_denominator(cfg_none):
    text = block(c("get_weather", city="Paris")) + "<tool_call>{not json}</tool_call>" + "<tool_call>"
    r = score(text, gt(GOLD), cfg_none)
    assert (r["tag_open_n"], r["tag_close_n"], r["tag_denom"], r["tag_valid_pair_n"]) == (3, 2, 3, 1)
    assert r["format_score"] == pytest.approx(1 / 3)
    assert r["format_passed"] == 0 and r["error_type"] == "json_error"


def test_unknown_tool_invalidates_its_whole_block(cfg_none):
    text = block(c("get_weather", city="Paris", unit="c"), c("rm_rf", path="/"))
    r = score(text, gt(GOLD), cfg_none)
    assert r["error_type"] == "tool_not_found"
    assert r["format_score"] == 0.0 and r["pred_tool_count"] == 0 and r["name_f1"] == 0.0


def test_unbalanced_but_valid_is_partial(cfg_none):
    text = block(c("get_weather", city="Paris", unit="c")) + "</tool_call>"
    r = score(text, gt(GOLD), cfg_none)
    assert r["format_score"] == 0.5 and r["format_passed"] == 0 and r["error_type"] == "partial"


def test_component_values_and_weights(cfg_none):
    # one valid block with a wrong value and an extra key; gold first step has 1 call, pred block has 2
    text = block(c("get_weather", city="Lyon", unit="c", extra=1), c("search", q="umbrella"))
    r = score(text, gt(GOLD), cfg_none)
    assert r["format_score"] == 1.0 and r["name_f1"] == 1.0
    key = (2 / 3 + 1.0) / 2  # Jaccard {city,unit}/{city,unit,extra}, then exact keys
    value = (1 / 2 + 1.0) / 2  # unit matches, city does not; search q matches
    assert r["key_score"] == pytest.approx(key) and r["value_score"] == pytest.approx(value)
    assert r["arg_match"] == pytest.approx((key + value) / 2)
    assert r["parallel_score"] == 0.0 and r["parallel_match"] == 0
    expected = W["fmt"] + W["name"] + W["key"] * key + W["value"] * value
    assert r["process_score"] == pytest.approx(expected)
    assert r["summary_score"] == 0.0 and r["score"] == pytest.approx(expected)
    assert r["weighted_score_norm"] == pytest.approx(expected / 2)


def test_parallel_calls_are_order_insensitive(cfg_none):
    gold = [[c("get_weather", city="Paris"), c("search", q="x"), c("convert", v=3)]]
    a = score(block(c("get_weather", city="Paris"), c("search", q="x"), c("convert", v=3)), gt(gold), cfg_none)
    b = score(block(c("convert", v=3), c("get_weather", city="Paris"), c("search", q="x")), gt(gold), cfg_none)
    assert a == b
    assert a["process_score"] == pytest.approx(1.0)


def test_parallel_calls_score_alike_as_one_list_or_one_block_per_call(cfg_none):
    """Qwen writes one block per parallel call; the reference data one block holding a list."""
    calls = [c("get_weather", city="Paris"), c("search", q="x"), c("convert", v=3)]
    gold = gt([calls])
    one_list, three_blocks = score(block(*calls), gold, cfg_none), score("\n".join(block(x) for x in calls), gold, cfg_none)
    assert three_blocks["parallel_score"] == 1.0 and three_blocks["first_step_pred_count"] == 3
    assert three_blocks["process_score"] == pytest.approx(1.0) == one_list["process_score"]
    assert {k: v for k, v in three_blocks.items() if k not in ("tag_open_n", "tag_close_n", "tag_denom", "tag_valid_pair_n")} == \
        {k: v for k, v in one_list.items() if k not in ("tag_open_n", "tag_close_n", "tag_denom", "tag_valid_pair_n")}


@pytest.mark.parametrize("outside", [False, True])
def test_blocks_after_a_tool_response_are_a_later_step_not_part_of_the_first(cfg_none, outside):
    # count_tags_outside_responses removes the responses before parsing; they still separate the steps
    cfg_none = cfg_none.model_copy(update={"count_tags_outside_responses": outside})
    calls = [c("get_weather", city="Paris"), c("search", q="x")]
    sequential = block(calls[0]) + resp("{}") + block(calls[1])
    r = score(sequential, gt([calls]), cfg_none)
    assert r["first_step_pred_count"] == 1 and r["parallel_score"] == 0.0
    # an invalid first block does not start the first step: the first valid block's turn does
    r = score(block(c("not_allowed")) + resp("{}") + block(*calls), gt([calls]), cfg_none)
    assert r["first_step_pred_count"] == 2 and r["parallel_score"] == 1.0


def test_omission_path():
    r = score("assistant\nI think it is sunny, no tools needed.", gt(GOLD))
    assert r["score"] == -0.5 and r["should_call_but_no_call"] == 1
    assert r["format_passed"] == 1 and r["error_type"] == "no_tool_call"
    assert r["process_score"] == 0.0 and r["summary_score"] == 0.0 and r["format_score"] == 0.0
    assert r["weighted_score_norm"] == 0.0 and r["total_score"] == 0.0 and r["success"] == 0
    assert r["first_step_gold_count"] == 1 and r["gold_tool_count"] == 2
    # a closing tag alone does not count as a call
    assert score("</tool_call> nothing", gt(GOLD))["should_call_but_no_call"] == 1


def test_omission_penalty_is_configurable():
    cfg = HierRReward(no_call_penalty=-1.0, w_process=0.5, w_summary=0.5)
    assert score("plain answer", gt(GOLD), cfg)["score"] == -1.0


def test_no_gold_no_call_reference_numbers():
    # docs/method.md#reference-quirks Q4: format 0, name/key/value/parallel full, summary 0 (no tool response)
    r = score("assistant\nI cannot help with that using these tools.", gt([]))
    assert r["format_score"] == 0.0 and r["name_f1"] == 1.0 and r["key_score"] == 1.0 and r["parallel_score"] == 1.0
    assert r["process_score"] == pytest.approx(0.9)
    assert r["no_tool_response"] == 1 and r["summary_score"] == 0.0
    assert r["weighted_score_norm"] == pytest.approx(0.45) and r["error_type"] == "no_tool_call"


def test_fix_format_one_without_needed_call():
    cfg = HierRReward(format_one_without_needed_call=True)
    assert score("direct answer", gt([]), cfg)["format_score"] == 1.0
    assert score("direct answer", gt([]), cfg)["process_score"] == pytest.approx(1.0)


def test_calls_when_none_needed():
    r = score(block(c("search", q="x")), gt([]))
    assert r["name_f1"] == 0.0 and r["key_score"] == 1.0 and r["parallel_score"] == 0.0


def test_names_only_gold_is_flagged_and_compares_parallel_to_total():
    r = score(block(c("search", q="x"), c("search", q="y")), gt(["search", "search", "convert"]))
    assert r["gold_names_only"] == 1
    assert r["key_score"] == 1.0 and r["value_score"] == 1.0
    assert r["first_step_gold_count"] == 3 and r["parallel_score"] == 0.0
    assert r["name_f1"] == pytest.approx(2 * 2 / 5)


def test_success_thresholds_and_tolerance_at_one():
    cfg = HierRReward(judge=JudgeConfig(name="none", failure_score=1.0, cache_dir=None))
    r = score(GOOD, gt(GOLD), cfg)
    assert r["weighted_score_norm"] == pytest.approx(1.0)
    assert all(r[f"success@{t}"] == 1 for t in (0.7, 0.8, 0.9, 1.0))
    cfg2 = HierRReward(success_thresholds=(0.5, 0.75), success_threshold=0.75, judge=JudgeConfig(name="none", cache_dir=None))
    r2 = score(GOOD, gt(GOLD), cfg2)
    assert r2["weighted_score_norm"] == pytest.approx(0.5)
    assert r2["success@0.5"] == 1 and r2["success@0.75"] == 0 and r2["success"] == 0
    assert "success@0.9" not in r2


def test_zero_total_weight_is_refused_by_the_config_and_guarded_in_the_reward():
    import pydantic

    with pytest.raises(pydantic.ValidationError, match="w_process"):
        HierRReward(w_process=0.0, w_summary=0.0)
    cfg = HierRReward().model_copy(update={"w_process": 0.0, "w_summary": 0.0})  # past validation
    r = score(GOOD, gt(GOLD), cfg)
    assert r["score"] == 0.0 and r["weighted_score_norm"] == 0.0 and not math.isnan(r["total_score"])


def test_error_rows_never_raise_and_keep_the_key_set():
    keys = result_keys(HierRReward())
    for bad_gt, err in [("x", "invalid_ground_truth"), (None, "invalid_ground_truth"), ({"gold_tool_calls": []}, "missing_allowed_tools")]:
        r = score(GOOD, bad_gt)
        assert list(r) == keys and r["score"] == 0 and r["error_type"] == err and r["reward_error"] == 1
    r = score(None, gt(GOLD))
    assert list(r) == keys and r["error_type"] == "invalid_solution_str"


def test_bad_gold_json_is_empty_gold_and_flagged():
    r = score("answer", gt("[[{broken"))
    assert r["gold_invalid"] == 1 and r["gold_tool_count"] == 0 and r["should_call_but_no_call"] == 0


def test_every_row_has_the_same_numeric_keys():
    texts = [GOOD, "", "plain", block(c("nope")), "<tool_call>", None, GOOD + "<tool_call>[]</tool_call>"]
    gts = [gt(GOLD), gt([]), gt(GOLD), "bad", gt(["search"]), gt(GOLD), gt(GOLD)]
    rows = compute_score_batch(["d"] * len(texts), texts, gts, None)
    keys = result_keys(HierRReward())
    for r in rows:
        assert list(r) == keys  # same keys, same order
        for k, v in r.items():
            if k == "error_type":
                assert isinstance(v, str)
            else:
                assert isinstance(v, (int, float)) and not isinstance(v, bool), k
    # each key has one type across rows (verl stacks them into arrays)
    for k in keys:
        assert len({type(r[k]) for r in rows}) == 1, k
    assert {r["error_type"] for r in rows} >= {"", "no_tool_call", "invalid_ground_truth", "partial", "invalid_solution_str"}


def test_batch_equals_single():
    texts = [GOOD, "plain", block(c("search", q="x")) + resp("nothing found here at all") + "Nothing was found, sorry."]
    gts = [gt(GOLD)] * 3
    assert compute_score_batch(["d"] * 3, texts, gts, [None] * 3) == [score(t, g) for t, g in zip(texts, gts)]


def test_reward_config_as_plain_mapping():
    r = score("direct answer", gt([]), {"name": "hierr", "format_one_without_needed_call": True, "judge": {"name": "none"}})
    assert r["format_score"] == 1.0
    with pytest.raises(Exception):
        score("x", gt([]), {"name": "hierr", "no_such_knob": 1})


def test_score_process_matches_row(cfg_none):
    ps = score_process(GOOD, gt(GOLD), cfg_none)
    assert ps is not None and ps.process == pytest.approx(1.0)
    assert score_process("no call", gt(GOLD), cfg_none) is None  # omission path


def test_fix_count_tags_outside_responses():
    inner = "user\n<tool_response>\nexample: <tool_call> in docs\n</tool_response>\nassistant\nDone with it all."
    text = block(c("search", q="x")) + inner
    ref = score(text, gt([c("search", q="x")]))
    fixed = score(text, gt([c("search", q="x")]), HierRReward(count_tags_outside_responses=True))
    assert ref["tag_open_n"] == 2 and ref["format_score"] == 0.5
    assert fixed["tag_open_n"] == 1 and fixed["format_score"] == 1.0


def test_pythonic_parser_option():
    cfg = HierRReward(parser="pythonic", judge=JudgeConfig(name="none", cache_dir=None))
    r = score("[get_weather(city='Paris', unit='c')]", gt([[c("get_weather", city="Paris", unit="c")]]), cfg)
    assert r["process_score"] == pytest.approx(1.0)


def test_too_large_response_is_not_parsed():
    cfg = HierRReward(max_response_chars=100)
    r = score(block(c("search", q="x" * 200)), gt([c("search", q="x")]), cfg)
    assert r["should_call_but_no_call"] == 1 and r["error_type"] == "too_large"
    r = score("y" * 200, gt([]), cfg)
    assert r["error_type"] == "too_large" and r["summary_score"] == 0.0


def test_allowed_tools_all_listed():
    assert sorted(gt([])["allowed_tools"]) == sorted(TOOLS)
