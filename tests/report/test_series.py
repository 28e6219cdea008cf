"""Metric lines → series, and the per-prompt outcome log → the all-correct stability curves."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from slca.algos.filters import stability_curve
from slca.report.series import Series, all_correct_fraction, metric_series, outcome_log, retention_curve, window_lift


def line(step: int, **metrics: object) -> dict[str, object]:
    return {"stage": "rl", "step": step, "time": 0.0, **{k.replace("__", "/"): v for k, v in metrics.items()}}


def test_a_resumed_run_keeps_the_later_line_for_a_step() -> None:
    records = [line(1, reward__score_mean=0.1), line(2, reward__score_mean=0.2), line(2, reward__score_mean=0.5), line(3, reward__score_mean=0.3)]
    series = metric_series(records, "reward/score_mean")
    assert series is not None and series.x == (1, 2, 3) and series.y == (0.1, 0.5, 0.3)


def test_null_values_are_gaps_and_other_stages_and_non_numbers_are_ignored() -> None:
    records = [line(1, entropy__all=None), line(2, entropy__all="high"), line(3, entropy__all=True), line(4, entropy__all=2),
               {"stage": "sft", "step": 5, "entropy/all": 9.0}]
    series = metric_series(records, "entropy/all")
    assert series is not None and series.x == (1, 4) and math.isnan(series.y[0]) and series.y[1] == 2.0
    assert metric_series(records, "entropy/tool") is None


def test_window_lift_compares_the_last_values_with_the_first_skipping_gaps() -> None:
    series = Series((1, 2, 3, 4, 5, 6), (0.2, math.nan, 0.4, 0.5, 0.7, 0.9))
    assert math.isclose(window_lift(series, head=2, tail=2), (0.7 + 0.9) / 2 - (0.2 + 0.4) / 2)
    assert math.isclose(window_lift(series, head=1, tail=1), 0.9 - 0.2)
    assert math.isnan(window_lift(series, head=3, tail=3))  # 5 finite values cannot fill two windows of 3


def test_all_correct_fraction_is_the_share_of_prompts_per_step() -> None:
    records = [line(1, prompts__all_correct=[[0, 3, 1], [0, 5, 0], [0, 7, 1], [0, 9, 1]]), line(2, prompts__all_correct=[]),
               line(3, prompts__all_correct=[[1, 3, 0], [1, 5, 0]])]
    series = all_correct_fraction(records)
    assert series is not None and series.x == (1, 3) and series.y == (0.75, 0.0)


def test_a_prompt_drawn_twice_in_an_epoch_is_all_correct_only_if_both_times() -> None:
    records = [line(1, prompts__all_correct=[[0, 1, 1], [0, 2, 1]]), line(2, prompts__all_correct=[[0, 1, 0], [0, 2, 1], ["x", 4, 1], [0, 5]])]
    assert outcome_log(records) == {0: {1: False, 2: True}}


def test_retention_counts_only_prompts_rolled_out_in_each_following_epoch() -> None:
    # Epoch 0: a, b, c all-correct, d not. Epoch 1: a stays, b drops, c skipped. Epoch 2: a stays, b back.
    log = {0: {"a": True, "b": True, "c": True, "d": False}, 1: {"a": True, "b": False, "d": True}, 2: {"a": True, "b": True, "d": True}}
    k1 = retention_curve(log, 1)
    assert k1.epochs == (0, 1) and k1.n == (2, 2) and k1.p == (0.5, 1.0) and k1.pooled == 0.75
    k2 = retention_curve(log, 2)
    assert k2.epochs == (0,) and k2.n == (2,) and k2.p == (0.5,)  # a stays twice; b drops in epoch 1
    assert retention_curve(log, 3).epochs == () and retention_curve(log, 3).pooled is None


outcome_logs = st.dictionaries(
    st.integers(0, 6),
    st.dictionaries(st.integers(0, 9), st.booleans(), max_size=10),
    max_size=7,
)


@settings(max_examples=200, deadline=None)
@given(log=outcome_logs, k=st.integers(1, 3))
def test_retention_matches_its_definition_written_with_sets(log: dict[int, dict[int, bool]], k: int) -> None:
    curve = retention_curve(log, k)
    expected_epochs = [e for e in sorted(log) if all(e + j in log for j in range(1, k + 1))]
    assert list(curve.epochs) == expected_epochs
    for e, n, p in zip(curve.epochs, curve.n, curve.p):
        correct = {e2: {pid for pid, ok in log[e2].items() if ok} for e2 in log}
        followed = set(correct[e]).intersection(*(set(log[e + j]) for j in range(1, k + 1)))
        stayed = followed.intersection(*(correct[e + j] for j in range(1, k + 1)))
        assert n == len(followed)
        assert p == (len(stayed) / len(followed) if followed else None)


@settings(max_examples=200, deadline=None)
@given(log=outcome_logs)
def test_for_k_1_retention_is_the_filters_stability_curve_one_epoch_later(log: dict[int, dict[int, bool]]) -> None:
    # The filter's stability_curve conditions epoch e on epoch e-1; with k = 1 it is the same event.
    dense = [log.get(e, {}) for e in range(max(log, default=-1) + 1)]
    reference = stability_curve(dense, 1)
    mine = retention_curve({e: outcomes for e, outcomes in enumerate(dense)}, 1)
    assert list(mine.epochs) == [e - 1 for e in reference["epochs"]]
    assert list(mine.n) == reference["n"] and list(mine.p) == reference["p"] and mine.pooled == reference["pooled"]
