"""Metric aggregation over rows and seeds."""

import math

import pytest

from slca.rewards.metrics import MeanStd, aggregate_rows, aggregate_seeds, default_metrics, mean_std


def row(name, key, value, process, norm):
    return {"name_f1": name, "key_score": key, "value_score": value, "process_score": process, "weighted_score_norm": norm}


def test_mean_std_and_format():
    m = mean_std([1.0, 2.0, 3.0])
    assert m.mean == 2.0 and m.std == pytest.approx(math.sqrt(2 / 3)) and m.n == 3
    assert mean_std([1.0, 2.0, 3.0], ddof=1).std == pytest.approx(1.0)
    assert str(MeanStd(0.8123, 0.0131, 3)) == "0.812 ± 0.013"
    assert MeanStd(0.5, 0.25, 2).format(1) == "0.5 ± 0.2"
    assert mean_std([0.3], ddof=1).std == 0.0
    assert math.isnan(mean_std([]).mean)


def test_aggregate_rows():
    rows = [row(1.0, 1.0, 0.5, 1.0, 0.95), row(0.5, 0.0, 0.0, 0.25, 0.5)]
    agg = aggregate_rows(rows)
    assert list(agg) == list(default_metrics()) == ["name_f1", "arg_match", "process", "success@0.9"]
    assert agg["name_f1"].mean == 0.75
    assert agg["arg_match"].mean == pytest.approx((0.75 + 0.0) / 2)
    assert agg["process"].std == pytest.approx(0.375)
    assert agg["success@0.9"].mean == 0.5
    assert aggregate_rows([row(1, 1, 1, 1, 1 - 1e-12)], ["success@1.0"])["success@1.0"].mean == 1.0
    assert aggregate_rows([row(1, 1, 1, 1, 0.8)], ["success@0.7"])["success@0.7"].mean == 1.0


def test_aggregate_seeds_uses_per_seed_means():
    seed_a = [row(1.0, 1, 1, 1, 1), row(0.0, 0, 0, 0, 0)]  # mean name 0.5
    seed_b = [row(1.0, 1, 1, 1, 1)] * 3  # mean name 1.0
    agg = aggregate_seeds([seed_a, seed_b], ["name_f1"])
    assert agg["name_f1"].mean == pytest.approx(0.75)
    assert agg["name_f1"].std == pytest.approx(math.sqrt(((0.5 - 0.75) ** 2 + 0.25**2) / 1))
    assert agg["name_f1"].n == 2
