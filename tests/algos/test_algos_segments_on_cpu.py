"""docs/method.md#reference-test-cases cases 1-11: segment runs and the process/summary split, via the estimators' fast path."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from slca.algos.segment_bounds import route, segment_bounds
from slca.toolcall.segments import segment_runs, split_segments
from tests.algos.oracles import reference_runs


def spans(mask_row: torch.Tensor) -> list[tuple[int, int]]:
    return reference_runs(mask_row.float().tolist())


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ([0] * 10, []),  # case 1
        ([0, 0, 1, 1, 1, 0, 0], [(2, 5)]),  # case 2
        ([1, 1, 0, 0, 1, 1, 1, 0, 1], [(0, 2), (4, 7), (8, 9)]),  # case 3
        ([1] * 5, [(0, 5)]),  # case 4
        ([1, 0, 1], [(0, 1), (2, 3)]),  # case 5
    ],
)
def test_runs_cases_1_to_5(row, expected):
    assert segment_runs(row) == expected
    assert reference_runs([float(v) for v in row]) == expected
    b = segment_bounds(torch.tensor([row], dtype=torch.float32))
    process, summary = b.masks()
    # The summary is the last run, the process everything before it.
    assert spans(summary[0]) == expected[-1:]
    assert spans(process[0]) == expected[:-1]


def test_case_6_all_zero_batch():
    b = segment_bounds(torch.zeros(2, 10))
    process, summary = b.masks()
    assert not process.any() and not summary.any()
    assert b.process_present.tolist() == [False, False]
    assert b.summary_present.tolist() == [False, False]


def test_case_7_single_run_is_summary():
    b = segment_bounds(torch.tensor([[0, 0, 1, 1, 1, 0, 0, 0, 0, 0]], dtype=torch.float32))
    process, summary = b.masks()
    assert not process.any() and not b.process_present[0]
    assert torch.nonzero(summary[0]).flatten().tolist() == [2, 3, 4] and b.summary_present[0]


def test_case_8_two_runs():
    b = segment_bounds(torch.tensor([[0, 1, 1, 0, 0, 1, 1, 1, 0, 0]], dtype=torch.float32))
    process, summary = b.masks()
    assert torch.nonzero(process[0]).flatten().tolist() == [1, 2]
    assert torch.nonzero(summary[0]).flatten().tolist() == [5, 6, 7]
    assert bool(b.process_present[0]) and bool(b.summary_present[0])


def test_case_9_three_runs_process_is_union():
    b = segment_bounds(torch.tensor([[1, 1, 0, 0, 1, 0, 0, 1, 1, 0]], dtype=torch.float32))
    process, summary = b.masks()
    assert torch.nonzero(process[0]).flatten().tolist() == [0, 1, 4]
    assert torch.nonzero(summary[0]).flatten().tolist() == [7, 8]
    assert not (process & summary).any()


def test_case_10_union_is_learnable():
    mask = torch.tensor([[0, 1, 1, 0, 1, 1, 1, 0, 1, 0]], dtype=torch.float32)
    process, summary = segment_bounds(mask).masks()
    assert torch.equal(process | summary, mask > 0.5)


def test_case_11_presence_flags():
    mask = torch.tensor(
        [[0, 1, 1, 0, 0, 1, 1, 0], [0, 0, 1, 1, 1, 0, 0, 0], [0] * 8],
        dtype=torch.float32,
    )
    b = segment_bounds(mask)
    assert b.process_present.tolist() == [True, False, False]
    assert b.summary_present.tolist() == [True, True, False]


def test_threshold_and_dtypes():
    """Learnable iff > 0.5, for float, int and bool masks alike."""
    row = [0.5, 0.51, 1.0, 0.2, 0.9]
    b = segment_bounds(torch.tensor([row]))
    assert torch.nonzero(b.masks()[1][0]).flatten().tolist() == [4]
    assert torch.nonzero(b.masks()[0][0]).flatten().tolist() == [1, 2]
    for dtype in (torch.int64, torch.bool):
        m = torch.tensor([[1, 0, 1, 1]]).to(dtype)
        p, s = segment_bounds(m).masks()
        assert p[0].tolist() == [True, False, False, False] and s[0].tolist() == [False, False, True, True]


def test_final_tool_turn_process_option():
    mask = torch.tensor([[1, 1, 0, 1, 1], [1, 1, 0, 1, 1], [0, 1, 1, 0, 0]], dtype=torch.float32)
    is_tool = torch.tensor([True, False, True])
    b = segment_bounds(mask, last_run_is_tool_call=is_tool, final_tool_turn="process")
    p, s = b.masks()
    assert p[0].tolist() == [True, True, False, True, True] and not s[0].any()
    assert p[1].tolist() == [True, True, False, False, False]
    assert p[2].tolist() == [False, True, True, False, False] and not s[2].any()
    assert b.process_present.tolist() == [True, True, True]
    assert b.summary_present.tolist() == [False, True, False]
    with pytest.raises(ValueError):
        segment_bounds(mask, final_tool_turn="process")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, 0.3, 0.7, 1.0]), min_size=1, max_size=24), min_size=1, max_size=6))
def test_matches_toolcall_split_and_reference(rows):
    width = max(len(r) for r in rows)
    mask = torch.tensor([r + [0.0] * (width - len(r)) for r in rows])
    b = segment_bounds(mask)
    p, s = b.masks()
    p2, s2, pp2, sp2 = split_segments(mask)
    assert torch.equal(p, p2) and torch.equal(s, s2)
    assert torch.equal(b.process_present, pp2) and torch.equal(b.summary_present, sp2)
    for i in range(mask.shape[0]):
        runs = reference_runs(mask[i].tolist())
        assert spans(s[i]) == runs[-1:]
        assert bool(b.process_present[i]) == (len(runs) >= 2)


def test_route_zeroes_off_mask_and_scales():
    mask = torch.tensor([[0.3, 1.0, 0.0, 1.0], [-1.0, 1.0, 1.0, 0.0]])
    b = segment_bounds(mask)
    out = route(b, mask, torch.tensor([2.0, 5.0]), torch.tensor([3.0, 7.0]))
    # Row 0: process [1], summary [3]; the 0.3 entry is not learnable and stays 0.
    assert out.tolist() == [[0.0, 2.0, 0.0, 3.0], [0.0, 7.0, 7.0, 0.0]]


def test_bfloat16_and_negative_zero_masks():
    mask = torch.tensor([[0.0, 1.0, 0.0, 1.0, 1.0], [-0.0, 1.0, 1.0, -0.0, 0.0]])
    base = route(segment_bounds(mask), mask, torch.tensor([2.0, 5.0]), torch.tensor([3.0, 7.0]))
    assert base.tolist() == [[0.0, 2.0, 0.0, 3.0, 3.0], [0.0, 7.0, 7.0, 0.0, 0.0]]
    bf = mask.to(torch.bfloat16)
    assert torch.equal(route(segment_bounds(bf), bf, torch.tensor([2.0, 5.0]), torch.tensor([3.0, 7.0])), base)
