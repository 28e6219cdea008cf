"""Pre-rollout filter (efficiency paper eq. 4-6), stability curve, and DAPO-style dynamic sampling."""

from __future__ import annotations

import json

import pytest
import torch

from slca.algos.dynamic_sampling import BatchFiller, drop_zero_variance
from slca.algos.filters import PreRolloutFilter, stability_curve
from slca.config.groups.filter import PreRolloutFilter as PreRolloutConfig

N = 4  # rollouts per prompt


def epoch(filt, prompts, outcome):
    """Admit, roll out (outcome(pid) -> list of N rewards), observe, end; returns (admitted, metrics)."""
    admitted = filt.admit(prompts)
    ids, rewards = [], []
    for pid in admitted:
        ids += [pid] * N
        rewards += outcome(pid)
    if ids:
        filt.observe(ids, torch.tensor(rewards))
    return admitted, filt.end_epoch()


ALL_CORRECT, ALL_WRONG, MIXED = [1.0] * N, [0.0] * N, [1.0, 0.0, 1.0, 0.0]


def test_skip_after_k_consecutive_all_correct():
    filt = PreRolloutFilter(k=2)
    prompts = [0, 1, 2]
    table = {0: ALL_CORRECT, 1: MIXED, 2: ALL_CORRECT}
    seen = [epoch(filt, prompts, table.get)[0] for _ in range(2)]
    assert seen == [[0, 1, 2], [0, 1, 2]]
    assert filt.counter(0) == 2 and filt.counter(1) == 0
    admitted, metrics = epoch(filt, prompts, table.get)
    assert admitted == [1]
    assert metrics["skipped"] == 2 and metrics["skipped_frac"] == pytest.approx(2 / 3)
    assert metrics["informative_frac"] == 1.0


def test_counter_resets_on_a_miss():
    filt = PreRolloutFilter(k=2)
    outcomes = iter([ALL_CORRECT, MIXED, ALL_CORRECT, ALL_CORRECT])
    for expected in (1, 0, 1, 2):
        epoch(filt, [5], lambda pid: next(outcomes))
        assert filt.counter(5) == expected
    assert filt.admit([5]) == []


def test_threshold_applies_per_rollout():
    filt = PreRolloutFilter(k=1, correct_threshold=0.9)
    _, m = epoch(filt, ["a", "b", "c"], {"a": [0.95, 0.9, 1.0, 0.92], "b": [0.95, 0.5, 1.0, 1.0], "c": [0.1] * N}.get)
    assert m["all_correct_frac"] == pytest.approx(1 / 3) and m["all_wrong_frac"] == pytest.approx(1 / 3)
    assert m["informative_frac"] == pytest.approx(2 / 3)
    assert filt.admit(["a", "b", "c"]) == ["b", "c"]


def test_skip_all_wrong_option_and_readmission():
    filt = PreRolloutFilter(k=1, skip_all_wrong=True, readmit_every=2)
    table = {0: ALL_WRONG, 1: ALL_CORRECT, 2: MIXED}
    history = [epoch(filt, [0, 1, 2], table.get)[0] for _ in range(6)]
    # Skipped for two epochs, re-admitted once, skipped again while still all-wrong/all-correct.
    assert history == [[0, 1, 2], [2], [2], [0, 1, 2], [2], [2]]


def test_never_readmitted_by_default():
    filt = PreRolloutFilter(k=1)
    history = [epoch(filt, [0, 1], {0: ALL_CORRECT, 1: ALL_WRONG}.get)[0] for _ in range(4)]
    assert history == [[0, 1], [1], [1], [1]]


def test_state_round_trip_through_json_mid_epoch():
    cfg = PreRolloutConfig(k=2, correct_threshold=1.0, skip_all_wrong=True, readmit_every=3)
    a = PreRolloutFilter.from_config(cfg)
    table = {0: ALL_CORRECT, "p-1": ALL_WRONG, 7: MIXED}
    for _ in range(3):
        epoch(a, [0, "p-1", 7], table.get)
    a.admit([0, "p-1", 7])
    a.observe([7] * N, torch.tensor(MIXED))  # half-way through an epoch
    text = json.dumps(a.state_dict())
    b = PreRolloutFilter.from_config(cfg)
    b.load_state_dict(json.loads(text))
    assert b.state_dict() == a.state_dict()
    assert isinstance(b.state_dict()["records"][0][0], int)  # int ids stay ints
    assert a.end_epoch() == b.end_epoch()
    for _ in range(4):
        assert epoch(a, [0, "p-1", 7], table.get) == epoch(b, [0, "p-1", 7], table.get)
    with pytest.raises(ValueError):
        PreRolloutFilter(k=3).load_state_dict(a.state_dict())


def test_prompt_ids_must_be_json_exact():
    with pytest.raises(TypeError):
        PreRolloutFilter().admit([(1, 2)])


def test_stability_curve():
    log = [
        {"a": "correct", "b": "correct", "c": "mixed"},
        {"a": "correct", "b": "mixed", "c": "correct"},
        {"a": "correct", "b": "correct", "c": "correct"},
        {"a": "wrong", "c": "correct"},  # b skipped: not observed
    ]
    k1 = stability_curve(log, 1)
    assert k1["epochs"] == [1, 2, 3]
    assert k1["n"] == [2, 2, 2] and k1["p"] == [0.5, 1.0, 0.5]
    assert k1["pooled"] == pytest.approx(4 / 6)
    k2 = stability_curve(log, 2)
    assert k2["epochs"] == [2, 3] and k2["n"] == [1, 2] and k2["p"] == [1.0, 0.5]
    bools = [{p: v == "correct" for p, v in e.items()} for e in log]
    assert stability_curve(bools, 1) == k1


def test_stability_curve_from_filter_log():
    filt = PreRolloutFilter(k=5)
    seq = {0: [ALL_CORRECT, ALL_CORRECT, MIXED], 1: [ALL_CORRECT, ALL_CORRECT, ALL_CORRECT]}
    for e in range(3):
        epoch(filt, [0, 1], lambda pid, e=e: seq[pid][e])
    curve = stability_curve(filt.outcome_log, 1)
    assert curve["p"] == [1.0, 0.5]


def test_drop_zero_variance():
    rewards = torch.tensor([1.0, 1.0, 0.0, 1.0, 0.5, 0.5, 3.0])
    kept, stats = drop_zero_variance(rewards, ["a", "a", "b", "b", "c", "c", "d"])
    assert kept.tolist() == [2, 3]
    assert stats == {"groups": 4, "dropped_groups": 3, "kept_groups": 1, "rows": 7, "kept_rows": 2}


def test_batch_filler_accumulates_and_counts_generations():
    filler = BatchFiller(target_groups=3, max_rounds=4)
    r1 = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])  # groups 0 (varied), 1 (flat), 2 (varied)
    assert filler.add(r1, [0, 0, 1, 1, 2, 2]).tolist() == [0, 1, 4, 5]
    assert not filler.full
    r2 = torch.tensor([0.0, 0.0, 0.0, 1.0, 1.0, 0.0])  # groups 10 (flat), 11, 12 (varied): room for one
    assert filler.add(r2, torch.tensor([10, 10, 11, 11, 12, 12])).tolist() == [2, 3]
    assert filler.full and filler.exhausted
    assert filler.stats() == {
        "rounds": 2,
        "generations": 12,
        "target_groups": 3,
        "kept_groups": 3,
        "dropped_groups": 2,
        "surplus_groups": 1,
        "filled": True,
    }
    with pytest.raises(RuntimeError):
        filler.add(r2, [0] * 6)


def test_batch_filler_round_cap():
    filler = BatchFiller(target_groups=5, max_rounds=1)
    filler.add(torch.tensor([1.0, 1.0]), [0, 0])
    assert filler.exhausted and not filler.full


def test_every_filter_option_is_built_through_the_registry():
    import typing

    from slca.algos.filters import FILTERS, build_filters
    from slca.config.groups.filter import DynamicSamplingFilter, FilterConfig, NoFilter

    options = {typing.get_args(cls.model_fields["name"].annotation)[0] for cls in typing.get_args(typing.get_args(FilterConfig)[0])}
    assert options == set(FILTERS)
    pre = build_filters(PreRolloutConfig(k=3, skip_all_wrong=True), success_threshold=0.9)
    filt = pre.prompt_filter
    assert isinstance(filt, PreRolloutFilter) and filt.k == 3 and filt.skip_all_wrong and pre.new_filler is None
    assert filt.correct_threshold == 0.9  # null correct_threshold: the reward's success rule
    assert build_filters(PreRolloutConfig(correct_threshold=0.5), success_threshold=0.9).prompt_filter.correct_threshold == 0.5
    none = build_filters(NoFilter())
    assert none.prompt_filter is None and none.new_filler is None
    dynamic = build_filters(DynamicSamplingFilter(max_generation_rounds=2))
    filler = dynamic.new_filler(8)
    assert dynamic.prompt_filter is None and filler.max_rounds == 2 and filler.target_groups == 8
