"""Max-variance down-sampling (PODS) and its random control."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from slca.algos.downsample import (
    DOWNSAMPLERS,
    downsample_from_config,
    get_downsampler,
    max_variance,
    max_variance_segment_sum,
    random_subset,
    register_downsampler,
)
from slca.config.groups.downsample import DownsampleConfig, MaxVarianceDownsample, NoDownsample, RandomDownsample
from slca.rewards import RewardBatch


def best_variance_brute(values, m, columns=False):
    best = -1.0
    for subset in itertools.combinations(range(len(values)), m):
        sel = np.asarray([values[i] for i in subset], dtype=np.float64)
        v = sel.var(axis=0).sum() if columns else sel.var()
        best = max(best, float(v))
    return best


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 12).flatmap(
        lambda n: st.tuples(
            st.lists(st.one_of(st.sampled_from([0.0, 1.0, 0.5]), st.floats(-2, 2, width=32)), min_size=n, max_size=n),
            st.integers(1, n),
        )
    )
)
def test_property_no_subset_has_larger_variance(data):
    values, m = data
    kept = max_variance(torch.tensor(values, dtype=torch.float64), [0] * len(values), m)
    assert kept.numel() == m and torch.equal(kept, torch.sort(kept).values)
    got = float(np.asarray(values, dtype=np.float64)[kept.numpy()].var())
    assert got >= best_variance_brute(values, m) - 1e-9


def test_binary_rewards_keep_half_of_each():
    rewards = torch.tensor([1, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0] + [1] * 14 + [0, 0], dtype=torch.float32)
    index = [0] * 16 + [1] * 16
    kept = max_variance(rewards, index, 4)
    assert kept.numel() == 8
    by_group = [rewards[kept[(kept < 16) == (g == 0)]] for g in (0, 1)]
    for vals in by_group:
        assert vals.sum().item() == 2  # two correct, two wrong in each group


def test_many_groups_match_per_group_brute_force():
    gen = torch.Generator().manual_seed(1)
    rewards = torch.rand(10 * 8, generator=gen)
    index = torch.arange(80) % 10  # interleaved groups
    kept = max_variance(rewards, index, 3)
    assert kept.numel() == 30
    for g in range(10):
        rows = torch.nonzero(index == g).flatten()
        chosen = rewards[kept[index[kept] == g]].double()
        assert chosen.numel() == 3
        best = best_variance_brute(rewards[rows].double().tolist(), 3)
        assert float(chosen.var(unbiased=False)) == pytest.approx(best, abs=1e-9)


def test_small_groups_kept_whole_and_extras():
    rewards = torch.tensor([0.1, 0.9, 0.5, 0.3, 0.3])
    extras: dict = {}
    kept = max_variance(rewards, ["a", "a", "b", "b", "b"], 2, extras=extras)
    assert kept[:2].tolist() == [0, 1]
    assert extras["method"] == "exact"


@settings(max_examples=25, deadline=None)
@given(
    st.integers(2, 9).flatmap(
        lambda n: st.tuples(
            st.lists(st.tuples(st.floats(0, 1, width=32), st.floats(0, 1, width=32)), min_size=n, max_size=n),
            st.integers(1, n),
        )
    )
)
def test_segment_sum_exact_beats_every_subset(data):
    pairs, m = data
    extras: dict = {}
    kept = max_variance_segment_sum(torch.tensor(pairs, dtype=torch.float64), [0] * len(pairs), m, extras=extras)
    assert kept.numel() == m
    got = float(np.asarray(pairs, dtype=np.float64)[kept.numpy()].var(axis=0).sum())
    assert got >= best_variance_brute(pairs, m, columns=True) - 1e-9
    assert extras["method"] in ("exact",) or len(pairs) <= m


def test_segment_sum_greedy_beyond_16():
    gen = torch.Generator().manual_seed(2)
    rewards = torch.rand(2 * 20, 2, generator=gen, dtype=torch.float64)
    extras: dict = {}
    kept = max_variance_segment_sum(rewards, [0] * 20 + [1] * 20, 4, extras=extras)
    assert extras["method"] == "greedy" and extras["greedy_groups"] == 2
    assert kept.numel() == 8
    for g in range(2):
        rows = kept[(kept >= 20 * g) & (kept < 20 * (g + 1))]
        got = float(rewards[rows].var(dim=0, unbiased=False).sum())
        # Local search is not guaranteed optimal; it must at least beat the single-reward rule.
        single = max_variance(rewards[20 * g : 20 * (g + 1)].sum(1), [0] * 20, 4)
        base = float(rewards[20 * g + single].var(dim=0, unbiased=False).sum())
        assert got >= base - 1e-12


def test_random_is_seeded_and_per_group():
    rewards = torch.zeros(48)
    index = [i // 16 for i in range(48)]
    a = random_subset(rewards, index, 4, seed=7)
    b = random_subset(rewards, index, 4, seed=7)
    c = random_subset(rewards, index, 4, seed=8)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert [(a // 16 == g).sum().item() for g in range(3)] == [4, 4, 4]


def test_from_config_selects_reward_column_through_the_registry():
    rewards = RewardBatch.from_columns(
        {"score": [0.0, 0.0, 1.0, 1.0], "process_score": [0.0, 1.0, 0.0, 1.0], "summary_score": [0.5, 0.5, 0.5, 0.5]}, 4
    )
    by_total = downsample_from_config(MaxVarianceDownsample(m=2, reward="total"), rewards, [0] * 4)
    by_tool = downsample_from_config(MaxVarianceDownsample(m=2, reward="tool"), rewards, [0] * 4)
    assert rewards.score[by_total].tolist() == [0.0, 1.0]
    assert rewards.process[by_tool].tolist() == [0.0, 1.0]
    assert downsample_from_config(RandomDownsample(m=2), rewards, [0] * 4).numel() == 2
    assert downsample_from_config(NoDownsample(), rewards, [0] * 4).tolist() == [0, 1, 2, 3]
    pairs = torch.stack([rewards.process, rewards.summary], 1).double()
    assert torch.equal(
        downsample_from_config(MaxVarianceDownsample(m=2, reward="segment_sum"), rewards, [0] * 4), max_variance_segment_sum(pairs, [0] * 4, 2)
    )


def test_every_downsample_config_option_has_a_registered_downsampler():
    import typing

    options = {typing.get_args(cls.model_fields["name"].annotation)[0] for cls in typing.get_args(typing.get_args(DownsampleConfig)[0])}
    assert options == set(DOWNSAMPLERS)


def test_a_composed_spec_resolves_a_null_m_against_n_once_and_refuses_an_oversized_m():
    from slca.config.compose import compose_spec
    from slca.config.errors import SpecError

    assert compose_spec(["downsample=max_variance", "train.rl.n=8"]).downsample.m == 4
    assert compose_spec(["downsample=random", "train.rl.n=3"]).downsample.m == 2  # at least 2
    assert compose_spec(["downsample=max_variance", "downsample.m=3", "train.rl.n=8"]).downsample.m == 3
    assert compose_spec(["downsample=none"]).downsample == NoDownsample()
    with pytest.raises(SpecError, match="config error at downsample.m: down-sampling keeps m=6 of train.rl.n=4"):
        compose_spec(["downsample=max_variance", "downsample.m=6", "train.rl.n=4"])


def test_a_downsampler_config_built_without_a_spec_and_left_without_m_is_refused():
    rewards = RewardBatch.from_columns({"score": [0.0, 1.0]}, 2)
    with pytest.raises(ValueError, match="downsample.m is unset"):
        downsample_from_config(MaxVarianceDownsample(), rewards, [0, 0])


def test_registry_refuses_duplicates():
    with pytest.raises(ValueError):
        register_downsampler("random")(lambda *a, **k: None)
    with pytest.raises(KeyError):
        get_downsampler("nope")
