"""Pairwise cosine statistics from per-set sums (Table 7's numbers), against hand-computed cases and pair
enumeration, and the text of a split row that gets embedded."""

from __future__ import annotations

import math

import numpy as np
import pytest

from slca.data.similarity import (PromptTextError, SetMoments, brute_force, cross_stats, prompt_text, sample_indices,
                                  within_stats)


def moments(rows: list[list[float]] | np.ndarray, *batches: int) -> SetMoments:
    x = np.asarray(rows, dtype=np.float64)
    m = SetMoments(x.shape[1])
    edges = [0, *batches, len(x)]
    for lo, hi in zip(edges, edges[1:]):
        m.add(x[lo:hi])
    return m


def test_two_orthogonal_vectors_against_one_give_a_cross_mean_of_one_half_and_a_within_mean_of_zero() -> None:
    a, b = moments([[1, 0], [0, 1]]), moments([[2, 0]])
    cross = cross_stats(a, b)
    assert (cross.mean, cross.std, cross.pairs) == pytest.approx((0.5, 0.5, 2))
    within = within_stats(a)
    assert (within.mean, within.std, within.pairs) == pytest.approx((0.0, 0.0, 2))


def test_a_set_of_one_prompt_has_no_within_pair_and_reports_none() -> None:
    one = within_stats(moments([[1.0, 2.0]]))
    assert one.pairs == 0 and math.isnan(one.mean)
    assert one.as_dict() == {"mean": None, "std": None, "pairs": 0}


def test_vectors_are_normalised_and_the_diagonal_is_left_out_within_a_set() -> None:
    # Unit vectors (0.6, 0.8), (0.6, 0.8), (0, 1): cosines 1, 0.8, 0.8 over the three unordered pairs.
    within = within_stats(moments([[3, 4], [6, 8], [0, 2]]))
    mean = (1 + 0.8 + 0.8) / 3
    std = math.sqrt(((1 - mean) ** 2 + 2 * (0.8 - mean) ** 2) / 3)
    assert within.pairs == 6
    assert within.mean == pytest.approx(mean) and within.std == pytest.approx(std)


def test_sums_folded_batch_by_batch_equal_every_pair_enumerated() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(50, 16)), rng.normal(size=(30, 16)) + 0.5
    streamed_a, streamed_b = moments(a, 7, 20, 21), moments(b, 1)
    for fast, slow in ((cross_stats(streamed_a, streamed_b), brute_force(a, b)), (within_stats(streamed_a), brute_force(a)),
                       (within_stats(streamed_b), brute_force(b))):
        assert fast.pairs == slow.pairs
        assert fast.mean == pytest.approx(slow.mean, abs=1e-12) and fast.std == pytest.approx(slow.std, abs=1e-9)


def test_a_zero_embedding_is_left_out_and_counted_not_given_a_direction() -> None:
    m = moments([[1, 0], [0, 0], [0, 1]])
    assert (m.n, m.dropped) == (2, 1)
    assert within_stats(m).mean == pytest.approx(0.0)


def test_a_batch_of_the_wrong_width_is_refused() -> None:
    with pytest.raises(ValueError, match=r"shape \(k, 2\)"):
        SetMoments(2).add(np.ones((3, 4)))


def test_sampling_keeps_everything_up_to_the_cap_and_draws_distinct_sorted_indices_past_it() -> None:
    assert sample_indices(10, None, 0) is None and sample_indices(10, 10, 0) is None
    picked = sample_indices(1000, 40, 3)
    assert picked == sorted(set(picked)) and len(picked) == 40 and picked == sample_indices(1000, 40, 3)
    assert picked != sample_indices(1000, 40, 4)


def test_the_embedded_text_is_the_user_messages_of_a_prompt_or_a_conversation() -> None:
    rl = {"prompt": [{"role": "system", "content": "S"}, {"role": "user", "content": "first"}, {"role": "assistant", "content": "x"},
                     {"role": "user", "content": "second"}]}
    assert prompt_text(rl, "user_turns") == "first\nsecond"
    assert prompt_text(rl, "first_user") == "first"
    sft = {"messages": '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]'}  # parquet's JSON string
    assert prompt_text(sft, "user_turns") == "hi"


@pytest.mark.parametrize(("row", "reason"), [
    ({"prompt": [{"role": "system", "content": "S"}]}, "prompt: no user message"),
    ({"prompt": [{"role": "user", "content": 3}]}, "prompt[0].content: expected a string"),
    ({"messages": "not json"}, "messages: not JSON"),
    ({"other": 1}, "neither a prompt nor a messages field"),
    ([1, 2], "expected an object"),
])
def test_a_row_without_user_text_is_refused_naming_the_field(row: object, reason: str) -> None:
    with pytest.raises(PromptTextError, match=reason.replace("[", r"\[").replace("]", r"\]")):
        prompt_text(row, "user_turns")
