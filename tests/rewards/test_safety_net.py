"""One safety net under every reward path, parser and judge: hostile model output scores 0 with a
reason and never raises; a bad configuration still raises.

The `llm` judge runs against a real HTTP server on 127.0.0.1 that checks each request body is
valid JSON before answering.
"""

from __future__ import annotations

import math

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slca.config.groups.reward import ExactMatchReward, HierRReward, JudgeConfig
from slca.rewards import RewardBatch, RewardRecord, compute_score, compute_score_batch
from slca.rewards.exact_match import ExactMatch
from slca.rewards.hierr import HierR
from slca.rewards.judges.grounding import GroundingJudge
from slca.rewards.metrics import aggregate_rows
from slca.rewards.net import INTERNAL_ERROR
from slca.toolcall import parse_hermes, parse_pythonic

from .hostile import HOSTILE_EXTRA_INFO, HOSTILE_GROUND_TRUTH, HOSTILE_OUTPUTS, gold, hostile_rows, judge_endpoint, pythonic_call

NONE = JudgeConfig(name="none", cache_dir=None)


@pytest.fixture(scope="module")
def judge_server():
    with judge_endpoint() as server:
        yield server


@pytest.fixture(scope="module")
def configs(judge_server, tmp_path_factory):
    """Every reward path's config: both parsers, every judge (llm with a disk cache)."""
    llm = JudgeConfig(
        name="llm", base_url=judge_server.url, cache_dir=str(tmp_path_factory.mktemp("judge")),
        max_retries=0, timeout_s=10, require_tool_response=False, min_response_chars=0,
    )
    return {
        "hierr/hermes/grounding": HierRReward(),
        "hierr/pythonic/grounding": HierRReward(parser="pythonic"),
        "hierr/hermes/none": HierRReward(judge=NONE),
        "hierr/hermes/llm": HierRReward(judge=llm),
        "hierr/pythonic/llm": HierRReward(parser="pythonic", judge=llm),
        "hierr/fixes": HierRReward(format_one_without_needed_call=True, count_tags_outside_responses=True,
                                   judge=JudgeConfig(strip_role_word=True, prompt_style="interactions", require_tool_response=False)),
        "exact_match/hermes": ExactMatchReward(require_think=True),
        "exact_match/pythonic": ExactMatchReward(parser="pythonic"),
    }


def check_rows(rows, cfg, n):
    """Rows are complete, scored and explain themselves; the catch-all was never needed."""
    assert len(rows) == n
    keys = list(compute_score("d", "", gold(), reward_config=cfg))
    for r in rows:
        assert list(r) == keys
        assert not r["error_type"].startswith(INTERNAL_ERROR), r["error_type"]
        assert math.isfinite(r["score"]) and math.isfinite(r["weighted_score_norm"])
        assert 0.0 <= r["toolpo_correct_ratio"] <= 1.0
        # malformed output scores with a reason: a failed format or an unusable row names why
        if not r["format_passed"] or r["reward_error"] or ("exact_match" in r and r["score"] == 0.0):
            assert r["error_type"], r
    records = [RewardRecord.from_row(r) for r in rows]
    batch = RewardBatch.from_records(records)
    assert len(batch) == n and batch.score.isfinite().all()
    for metric in aggregate_rows(rows).values():
        assert n == 0 or math.isfinite(metric.mean)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.tuples(HOSTILE_OUTPUTS, HOSTILE_GROUND_TRUTH, HOSTILE_EXTRA_INFO), min_size=1, max_size=4))
def test_hostile_outputs_score_with_a_reason_on_every_path(configs, triples):
    outs, gts, extras = (list(x) for x in zip(*triples))
    for cfg in configs.values():
        check_rows([compute_score("d", o, g, e, reward_config=cfg) for o, g, e in triples], cfg, len(triples))
        check_rows(compute_score_batch(["d"] * len(outs), outs, gts, extras, reward_config=cfg), cfg, len(triples))
        scorer = HierR(cfg) if isinstance(cfg, HierRReward) else ExactMatch(cfg)
        check_rows([scorer.one(o, g, e) for o, g, e in triples], cfg, len(triples))
        check_rows(scorer.batch(outs, gts, extras), cfg, len(triples))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(HOSTILE_OUTPUTS)
def test_hostile_outputs_never_make_a_parser_raise(text):
    for parse in (parse_hermes, parse_pythonic):
        pr = parse(text)
        assert pr.error is not None or all((b.calls is None) == (b.error is not None) for b in pr.blocks)


def test_fuzzed_outputs_through_every_path_raise_nothing(configs, judge_server):
    """A counted fuzz run (benchmarks/reward_fuzz.py runs the same at volume): 0 exceptions,
    0 rows from the catch-all, and every llm request body was valid JSON."""
    outs, gts, extras = hostile_rows(300, seed=1)
    pushed = {}
    for name, cfg in configs.items():
        check_rows(compute_score_batch(["d"] * len(outs), outs, gts, extras, reward_config=cfg), cfg, len(outs))
        check_rows([compute_score("d", o, g, e, reward_config=cfg) for o, g, e in zip(outs, gts, extras)], cfg, len(outs))
        pushed[name] = 2 * len(outs)
    for parse in (parse_hermes, parse_pythonic):
        for o in outs:
            parse(o)
    assert sum(pushed.values()) == 2 * 300 * len(configs)
    assert judge_server.requests > 0 and judge_server.bad == 0


def test_mixed_key_and_unhashable_key_literals_are_scored_not_raised():
    gt = gold("f", {"a": {"1": 2, "null": 3}})
    for value, hit in (("{1: 2, None: 3}", 0), ("{'1': 2, 'null': 3}", 1), ("{{1: 2}: 3}", 0), ("{(1, 2): 3}", 0)):
        r = compute_score("d", pythonic_call("f", value), gt, reward_config=ExactMatchReward(parser="pythonic"))
        assert r["score"] == hit and r["exact_match"] == hit
        assert not r["error_type"].startswith(INTERNAL_ERROR)
    # An unhashable key is malformed output: the block is invalid, with the reason named.
    r = compute_score("d", pythonic_call("f", "{{1: 2}: 3}"), gt, reward_config=HierRReward(parser="pythonic", judge=NONE))
    assert r["error_type"] == "bad_arguments" and r["format_score"] == 0.0


def test_a_judge_that_raises_scores_the_failure_score_flagged():
    class Exploding(GroundingJudge):
        def score(self, req):
            if "boom" in req.final_response:
                raise RuntimeError("judge bug")
            return super().score(req)

    cfg = HierRReward(judge=JudgeConfig(require_tool_response=False, failure_score=0.25))
    call = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
    texts = [call + " boom, it is 1", call + " the answer is 1"]
    scorer = HierR(cfg, judge=Exploding(cfg.judge))
    rows = scorer.batch(texts, [gold()] * 2, [None] * 2)
    assert rows[0]["judge_failed"] == 1 and rows[0]["summary_score"] == 0.25
    assert rows[1]["judge_failed"] == 0
    assert scorer.one(texts[0], gold(), None)["judge_failed"] == 1


def test_bad_configuration_still_raises_outside_the_net():
    with pytest.raises(pydantic.ValidationError):
        compute_score("d", "x", gold(), reward_config={"name": "hierr", "w_format": "heavy"})
    with pytest.raises(pydantic.ValidationError):
        compute_score("d", "x", gold(), reward_config={"name": "no_such_reward"})
    with pytest.raises(ValueError, match="differ in length"):
        compute_score_batch(["d"] * 2, ["a", "b"], [gold()], None)
