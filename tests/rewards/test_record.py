"""The typed per-rollout reward record: HierR's ToolPO ratio, the record <-> verl dict conversion,
and the batched tensor view the estimators read."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from slca.config.groups.reward import ExactMatchReward, HierRReward, JudgeConfig
from slca.rewards import RewardBatch, RewardRecord, compute_score, compute_score_batch, score_records

from .conftest import block, c, gt

CFG = HierRReward(judge=JudgeConfig(name="none", cache_dir=None))
VALUES = st.sampled_from([1, 1.0, True, "1", "Paris", None, [1, 2], {"k": 1}, {"k": 1.0}])
CALL = st.builds(c, st.sampled_from(["get_weather", "search"]), **{"city": VALUES})


def ratio_oracle(pred, gold):
    """Strict-correct calls matched one-to-one / |gold|: for an equality relation greedy matching
    is maximum matching, i.e. the size of the multiset intersection (types distinguish values)."""
    def key(call):
        return call["name"], json.dumps(call["arguments"], sort_keys=True)

    if not gold:
        return 1.0 if not pred else 0.0
    common = Counter(map(key, pred)) & Counter(map(key, gold))
    return sum(common.values()) / len(gold)


@settings(max_examples=200, deadline=None)
@given(st.lists(CALL, max_size=4), st.lists(CALL, min_size=1, max_size=4))
def test_hierr_toolpo_ratio_is_strict_correct_calls_over_gold(pred, gold):
    text = "".join(block(p) for p in pred)
    row = compute_score("d", text, gt([gold]), reward_config=CFG)
    if pred:
        assert row["toolpo_correct_ratio"] == pytest.approx(ratio_oracle(pred, gold))
    else:
        assert row["should_call_but_no_call"] == 1 and row["toolpo_correct_ratio"] == 0.0


def test_toolpo_ratio_edge_cases():
    one = c("get_weather", city="Paris")
    assert compute_score("d", block(one, one), gt([[one]]), reward_config=CFG)["toolpo_correct_ratio"] == 1.0  # one-to-one
    assert compute_score("d", block(c("get_weather", city=1.0)), gt([[c("get_weather", city=1)]]), reward_config=CFG)["toolpo_correct_ratio"] == 0.0
    # bare-name gold compares names only (reference quirk Q1); no gold and no call is perfect
    assert compute_score("d", block(one), gt(["get_weather", "search"]), reward_config=CFG)["toolpo_correct_ratio"] == 0.5
    assert compute_score("d", "It is sunny.", gt([]), reward_config=CFG)["toolpo_correct_ratio"] == 1.0
    assert compute_score("d", block(one), gt([]), reward_config=CFG)["toolpo_correct_ratio"] == 0.0
    # exact match carries the same diagnostic, so toolpo runs under either reward
    assert compute_score("d", block(one), gt([[one]]), reward_config=ExactMatchReward())["toolpo_correct_ratio"] == 1.0
    assert compute_score("d", block(one), None)["toolpo_correct_ratio"] == 0.0  # invalid ground truth


@pytest.mark.parametrize("cfg", [CFG, ExactMatchReward()], ids=["hierr", "exact_match"])
def test_record_and_verl_dict_convert_both_ways(cfg):
    one = c("get_weather", city="Paris")
    rows = compute_score_batch(["d"] * 3, [block(one), "no call", None], [gt([[one]])] * 3, None, reward_config=cfg)
    for row in rows:
        record = RewardRecord.from_row(row)
        assert record.to_row() == row  # verl's dict, "score" included, nothing lost
        assert RewardRecord.from_row(record.to_row()) == record
        assert (record.score, record.process, record.summary) == (row["score"], row["process_score"], row["summary_score"])
        assert record.no_call == bool(row["should_call_but_no_call"]) and record.error_type == row["error_type"]
    first, no_call, bad = (RewardRecord.from_row(r) for r in rows)
    assert first.normalised == (1.0 if cfg is not CFG else 0.5) and no_call.no_call and bad.error_type == "invalid_solution_str"
    flagged = first.with_rollout(last_turn_is_tool_call=True)
    assert flagged.to_row()["last_run_is_tool_call"] == 1 and RewardRecord.from_row(flagged.to_row()) == flagged
    with pytest.raises(KeyError, match="process_score"):
        RewardRecord.from_row({"score": 1.0})


def test_reward_batch_from_records_and_from_verl_columns_agree():
    one = c("get_weather", city="Paris")
    texts = [block(one), block(c("search", city="x")), "nothing"]
    records = score_records(texts, [gt([[one]])] * 3, None, reward_config=CFG, last_turn_is_tool_call=[True, False, False])
    batch = RewardBatch.from_records(records)
    assert batch.score.dtype == torch.float32 and batch.no_call.dtype == torch.bool and len(batch) == 3
    assert batch.last_turn_is_tool_call.tolist() == [True, False, False]
    assert batch.no_call.tolist() == [False, False, True]
    # verl's non-tensor batch: object columns under the reference's prefix, None read as 0
    rows = [r.to_row() for r in records]
    columns = {f"reward/tool_call/{k}": np.array([r[k] for r in rows], dtype=object) for k in rows[0] if k != "error_type"}
    columns["reward/tool_call/score"] = np.array([None, rows[1]["score"], rows[2]["score"]], dtype=object)
    from_verl = RewardBatch.from_columns(columns, 3)
    for name in ("process", "summary", "toolpo_correct_ratio", "no_call", "last_turn_is_tool_call", "normalised"):
        assert torch.equal(getattr(from_verl, name), getattr(batch, name)), name
    assert from_verl.score.tolist() == [0.0, *batch.score.tolist()[1:]]
    kept = batch.select(torch.tensor([2, 0]))
    assert kept.no_call.tolist() == [True, False] and kept.score.tolist() == [batch.score[2].item(), batch.score[0].item()]
    with pytest.raises(ValueError, match="'process_score' has 2 values for a batch of 3"):
        RewardBatch.from_columns({"process_score": [0.1, 0.2]}, 3)
    # a field missing from any record is absent from the batch, and asking for it names its column
    partial = RewardBatch.from_records([records[0], RewardRecord(score=0.0, process=0.0, summary=0.0)])
    assert partial.toolpo_correct_ratio is None
    with pytest.raises(KeyError, match="toolpo needs the reward column 'toolpo_correct_ratio'"):
        partial.need("toolpo_correct_ratio", "toolpo")
