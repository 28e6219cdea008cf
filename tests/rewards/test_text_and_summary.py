"""Judge inputs and summary short-circuits (docs/method.md#summary-judge), the grounding judge and the prompt."""


import pytest

from slca.config.groups.reward import HierRReward, JudgeConfig
from slca.rewards import compute_score
from slca.rewards.judges import JudgeRequest, build_judge
from slca.rewards.judges.grounding import grounding_score, salient
from slca.rewards.judges.prompt import build_prompt, parse_rating
from slca.rewards.text import final_response, strip_role_word, tool_calls_text, tool_responses_text
from tests.scaling import assert_linear

from .conftest import block, c, gt, resp


def test_tool_responses_text_format():
    text = "x<tool_response>\n a \n</tool_response>y<tool_response>b</tool_response><tool_response>unclosed"
    assert tool_responses_text(text) == "[Tool Response 1]\na\n\n[Tool Response 2]\nb"
    assert tool_responses_text("none here") == ""
    assert tool_calls_text(block(c("a", x=1))) == '[Tool Call 1]\n{"name": "a", "arguments": {"x": 1}}'


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<tool_call>{}</tool_call><tool_response>r</tool_response>\nassistant\nFinal words.", "assistant\nFinal words."),
        ("<tool_call>{}</tool_call><tool_response>r</tool_response>  ", ""),  # nothing after the response
        ("<tool_call>{}</tool_call> after the call", "after the call"),
        ("<tool_call>{}</tool_call>\n<tool_call>{}", ""),  # tail starts with another call
        # reference quirk: a trailing call after the last response *is* the "final response"
        ("<tool_response>r</tool_response>\n<tool_call>{}</tool_call>\n", "<tool_call>{}</tool_call>"),
        ("just an answer <tool_call>unclosed", "just an answer <tool_call>unclosed"),
        ("  direct  ", "direct"),
    ],
)
def test_final_response(text, expected):
    assert final_response(text) == expected


def test_strip_role_word():
    assert strip_role_word("assistant\nHello") == "Hello"
    assert strip_role_word("assistants are nice") == "assistants are nice"


def _jcfg(**kw):
    return HierRReward(judge=JudgeConfig(**{"cache_dir": None, **kw}))


GOLD = [c("get_weather", city="Paris")]
CALL = block(c("get_weather", city="Paris"))


def test_short_final_answer_is_very_poor_without_judging():
    r = compute_score("d", CALL + resp('{"t": 21.5}') + "ok", gt(GOLD))
    assert r["summary_score"] == 0.0 and r["judge_failed"] == 0 and r["no_tool_response"] == 0


def test_no_tool_response_short_circuit_and_switch():
    text = CALL + "It is probably sunny in Paris today."
    r = compute_score("d", text, gt(GOLD))
    assert r["no_tool_response"] == 1 and r["summary_score"] == 0.0
    # v8.2 behaviour: judge direct answers too; grounding has no source → middle level
    r2 = compute_score("d", text, gt(GOLD), reward_config=_jcfg(require_tool_response=False))
    assert r2["no_tool_response"] == 1 and r2["summary_score"] == 0.5


def test_grounding_levels():
    req = lambda ans, tools="[Tool Response 1]\n" + '{"temp": 21.5, "condition": "sunny", "city": "Paris"}', gold=None: JudgeRequest("q", tools, ans, "", gold)
    assert grounding_score(req("Sunny in Paris, 21.5 degrees.")) == 1.0
    assert grounding_score(req("It is sunny.")) == pytest.approx(1 / 3)
    assert grounding_score(req("No idea at all, sorry.")) == 0.0
    # invented numbers cost: 21.5 is grounded, 99.9 is not
    assert grounding_score(req("Sunny in Paris, 21.5 or 99.9 degrees.")) == pytest.approx(0.5)
    # a gold answer is a second source, averaged with the tool responses
    assert grounding_score(req("Sunny in Paris, 21.5 degrees.", gold="Expect rain tomorrow")) == pytest.approx(0.5)
    judge = build_judge(JudgeConfig(name="grounding"))
    res = judge.score(req("It is sunny."))
    assert (res.score, res.rating) == (0.25, "poor")
    assert judge.score(req("It is sunny.")) == res  # deterministic


def test_salient_values():
    nums, words = salient('[1] Total: 1,234.50 USD, "user_id": 42, in 2024. See alpha-beta and this')
    assert nums == {"1234.5", "42", "2024"}
    assert "alpha-beta" in words and "user_id" not in words and "this" not in words and "total" in words


def test_gold_answer_from_ground_truth_reaches_the_judge():
    text = CALL + resp('{"temp": 21.5}') + "The temperature is 21.5 in Paris today."
    plain = compute_score("d", text, gt(GOLD))
    with_gold = compute_score("d", text, gt(GOLD, gold_answer="Paris is at 21.5 degrees and sunny with light wind"))
    assert plain["summary_score"] == 1.0
    assert with_gold["summary_score"] < 1.0


def test_none_judge_scores_failure_score_without_flag():
    r = compute_score("d", CALL + resp("x" * 20) + "A long enough final answer.", gt(GOLD), reward_config=_jcfg(name="none", failure_score=0.25))
    assert r["summary_score"] == 0.25 and r["judge_failed"] == 0


def test_prompt_structure_and_strict_parse():
    req = JudgeRequest("Q?", "[Tool Response 1]\nR", "Answer.", "[Tool Call 1]\n{}")
    p = build_prompt(req)
    for part in ("## User Question\n```\nQ?\n```", "## Tool Results", "## Model's Final Response\n```\nAnswer.\n```", "<rating>LABEL</rating>"):
        assert part in p
    for lab in ("very poor", "poor", "acceptable", "good", "excellent"):
        assert lab in p
    pi = build_prompt(req, "interactions")
    assert "## Tool Interactions" in pi and pi.index("[Tool Call 1]") < pi.index("[Tool Response 1]")
    ok = "<response><response_quality><reasoning>fine</reasoning><rating> Good </rating></response_quality></response>"
    assert parse_rating(ok) == "good"
    assert parse_rating(ok.upper()) == "good"
    assert parse_rating("<rating>good</rating>") is None  # must sit inside response_quality
    assert parse_rating(ok.replace("Good", "great")) is None
    assert parse_rating(ok.replace("Good", "4")) is None


@pytest.mark.parametrize("reply, expected", [
    ("<RESPONSE_QUALITY><RATING>Excellent</RATING></RESPONSE_QUALITY>", "excellent"),
    ("<response_quality>\n<reasoning>ok</reasoning>\n<rating>\n very poor \n</rating>\n</response_quality>", "very poor"),
    ("Sure.\n<response><response_quality><rating>acceptable</rating></response_quality></response> done", "acceptable"),
    ("<response_quality><rating>poor</rating><rating>good</rating></response_quality>", "poor"),  # the first rating counts
    ("<response_quality><rating>poor</rating></response_quality><response_quality><rating>good</rating></response_quality>", "poor"),
    ("<response_quality><rating>great</rating><rating>good</rating></response_quality>", None),  # no second chance
    ("<response_quality><rating>x<rating>good</rating></response_quality>", None),
    ("<response_quality></response_quality><rating>good</rating></response_quality>", "good"),  # any later closing will do
    ("<response_quality><rating>good</rating>", None),  # no closing response_quality
    ("<response_quality><rating>good</response_quality>", None),  # no closing rating
    ("<rating>good</rating><response_quality></response_quality>", None),
    ("", None),
])
def test_the_rating_is_read_from_the_first_response_quality_block(reply, expected):
    assert parse_rating(reply) == expected


@pytest.mark.parametrize("reply, size, expected", [
    (lambda m: "<response_quality><rating>x" * m, 37_000, None),  # the cubic backtracking case of the old regex
    (lambda m: "<response_quality>" * m, 55_000, None),
    (lambda m: "<Response_Quality><rating>" * m + "</rating>", 39_000, None),
    (lambda m: "<rating>x</rating>" * m + "<response_quality><rating>good</rating></response_quality>", 55_000, "good"),
], ids=["open-rating", "open-block", "open-mixed-case", "closed-ratings-first"])
def test_a_megabyte_judge_reply_full_of_open_tags_is_parsed_in_linear_time(reply, size, expected):
    assert len(reply(size)) >= 990_000
    assert parse_rating(reply(size)) == expected
    assert_linear(lambda m: parse_rating(reply(m)), size // 8)
