"""Segment masks: docs/method.md#segments-from-mask-topology and docs/method.md#reference-test-cases cases 1–11, the [FIX] final-tool-turn option, spans, vectorisation."""

from __future__ import annotations

import pytest
import torch

from slca.toolcall.segments import segment_runs, split_segments, split_spans
from tests.scaling import assert_within


def span_mask(length, *spans):
    m = torch.zeros(length, dtype=torch.bool)
    for s, e in spans:
        m[s:e] = True
    return m


# ----------------------------------------------------------------------------- docs/method.md#reference-test-cases cases 1–5


@pytest.mark.parametrize(
    "mask,runs",
    [
        ([0] * 10, []),  # 1
        ([0, 0, 1, 1, 1, 0, 0], [(2, 5)]),  # 2
        ([1, 1, 0, 0, 1, 1, 1, 0, 1], [(0, 2), (4, 7), (8, 9)]),  # 3
        ([1] * 5, [(0, 5)]),  # 4
        ([1, 0, 1], [(0, 1), (2, 3)]),  # 5
        ([0.2, 0.6, 0.5, 0.51], [(1, 2), (3, 4)]),  # threshold is > 0.5
        ([], []),
    ],
)
def test_segment_runs(mask, runs):
    assert segment_runs(mask) == runs
    assert segment_runs(torch.tensor(mask, dtype=torch.float32)) == runs


# ----------------------------------------------------------------------------- docs/method.md#reference-test-cases cases 6–11


def test_case6_all_zero():
    p, s, pp, sp = split_segments(torch.zeros(2, 10))
    assert not p.any() and not s.any()
    assert pp.tolist() == [False, False] and sp.tolist() == [False, False]


def test_case7_single_run_is_summary():
    p, s, pp, sp = split_segments(torch.tensor([[0, 0, 1, 1, 1, 0, 0, 0, 0, 0]], dtype=torch.float32))
    assert not p.any() and pp.tolist() == [False]
    assert torch.equal(s[0], span_mask(10, (2, 5))) and sp.tolist() == [True]


def test_case8_two_runs():
    p, s, pp, sp = split_segments(torch.tensor([[0, 1, 1, 0, 0, 1, 1, 1, 0, 0]]))
    assert torch.equal(p[0], span_mask(10, (1, 3)))
    assert torch.equal(s[0], span_mask(10, (5, 8)))
    assert pp.tolist() == [True] and sp.tolist() == [True]


def test_case9_three_runs_process_is_union():
    p, s, pp, sp = split_segments(torch.tensor([[1, 1, 0, 0, 1, 0, 0, 1, 1, 0]], dtype=torch.float32))
    assert torch.equal(p[0], span_mask(10, (0, 2), (4, 5)))
    assert torch.equal(s[0], span_mask(10, (7, 9)))
    assert pp.tolist() == [True] and sp.tolist() == [True]
    assert not (p & s).any()


def test_case10_union_equals_learnable():
    mask = torch.tensor([[0, 1, 1, 0, 1, 1, 1, 0, 1, 0]], dtype=torch.float32)
    p, s, _, _ = split_segments(mask)
    assert torch.equal(p | s, mask > 0.5) and not (p & s).any()


def test_case11_batch_presence():
    mask = torch.tensor(
        [[0, 1, 1, 0, 0, 1, 1, 1, 0, 0], [0, 0, 1, 1, 1, 0, 0, 0, 0, 0], [0] * 10], dtype=torch.float32
    )
    _, _, pp, sp = split_segments(mask)
    assert pp.tolist() == [True, False, False] and sp.tolist() == [True, True, False]


def test_bool_input_and_dtypes():
    mask = torch.tensor([[True, False, True]])
    p, s, pp, sp = split_segments(mask)
    assert p.dtype == s.dtype == pp.dtype == sp.dtype == torch.bool
    assert p.tolist() == [[True, False, False]] and s.tolist() == [[False, False, True]]
    assert mask.tolist() == [[True, False, True]]  # input untouched


def test_zero_length_and_bad_shapes():
    p, s, pp, sp = split_segments(torch.zeros(3, 0))
    assert p.shape == s.shape == (3, 0) and pp.tolist() == sp.tolist() == [False] * 3
    with pytest.raises(ValueError):
        split_segments(torch.zeros(5))
    with pytest.raises(ValueError):
        split_segments(torch.zeros(1, 5), final_tool_turn="other")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- [FIX] final tool turn


def test_final_tool_turn_process_option():
    mask = torch.tensor(
        [
            [0, 1, 1, 0, 0, 1, 1, 1, 0, 0],  # two runs, last is a tool call
            [0, 0, 1, 1, 1, 0, 0, 0, 0, 0],  # one run, a tool call (truncated rollout)
            [1, 1, 0, 1, 0, 0, 0, 0, 0, 0],  # two runs, last is an answer
            [0] * 10,  # empty, flag set: stays empty
        ],
        dtype=torch.float32,
    )
    is_tool = torch.tensor([True, True, False, True])
    ref = split_segments(mask)
    # The reference mode ignores the flag.
    assert all(torch.equal(a, b) for a, b in zip(ref, split_segments(mask, last_run_is_tool_call=is_tool)))
    p, s, pp, sp = split_segments(mask, last_run_is_tool_call=is_tool, final_tool_turn="process")
    learn = mask > 0.5
    assert torch.equal(p[0], learn[0]) and not s[0].any()
    assert torch.equal(p[1], learn[1]) and not s[1].any()
    assert torch.equal(p[2], ref[0][2]) and torch.equal(s[2], ref[1][2])
    assert not p[3].any() and not s[3].any()
    assert pp.tolist() == [True, True, True, False] and sp.tolist() == [False, False, True, False]
    assert torch.equal(p | s, learn) and not (p & s).any()
    with pytest.raises(ValueError):
        split_segments(mask, final_tool_turn="process")


# ----------------------------------------------------------------------------- vectorised == reference


def reference_split(mask):
    """Per-row loop straight from docs/method.md#segments-from-mask-topology."""
    b, t = mask.shape
    p = torch.zeros(b, t, dtype=torch.bool)
    s = torch.zeros(b, t, dtype=torch.bool)
    pp, sp = [], []
    for i in range(b):
        runs = segment_runs(mask[i])
        for st_, en in runs[:-1]:
            p[i, st_:en] = True
        if runs:
            s[i, runs[-1][0] : runs[-1][1]] = True
        pp.append(len(runs) >= 2)
        sp.append(len(runs) >= 1)
    return p, s, torch.tensor(pp), torch.tensor(sp)


@pytest.mark.parametrize("seed", range(5))
def test_vectorised_matches_reference(seed):
    g = torch.Generator().manual_seed(seed)
    b, t = 64, 48
    density = torch.rand(b, 1, generator=g)
    mask = (torch.rand(b, t, generator=g) < density).float()
    mask[0] = 0
    mask[1] = 1
    got = split_segments(mask)
    want = reference_split(mask)
    for a, w in zip(got, want):
        assert torch.equal(a, w)


def test_numpy_and_torch_run_start_paths_agree():
    """CPU masks take the numpy path; the torch path (other devices) must give the same starts."""
    from slca.toolcall.segments import _run_starts_numpy, _run_starts_torch

    gen = torch.Generator().manual_seed(4)
    learn = torch.rand(64, 33, generator=gen) > 0.6
    learn[0] = False
    learn[1] = True
    got_np, got_torch = _run_starts_numpy(learn), _run_starts_torch(learn)
    for a, b in zip(got_np, got_torch):
        assert torch.equal(a, b)
    first, last, has = got_np
    for i in range(learn.shape[0]):
        runs = segment_runs(learn[i].float())
        assert bool(has[i]) == bool(runs)
        if runs:
            assert (int(first[i]), int(last[i])) == (runs[0][0], runs[-1][0])


def test_bfloat16_mask_takes_torch_threshold():
    mask = torch.tensor([[0.0, 1.0, 0.0, 0.3, 1.0, 1.0]])
    for got, want in zip(split_segments(mask.to(torch.bfloat16)), split_segments(mask)):
        assert torch.equal(got, want)


def test_a_large_batch_is_split_with_tensor_operations_not_a_loop_per_token():
    g = torch.Generator().manual_seed(0)
    mask = (torch.rand(256, 8192, generator=g) < 0.7).float()
    p, s, pp, sp = split_segments(mask)
    assert torch.equal(p | s, mask > 0.5)
    # a handful of whole-tensor passes (measured: under 1x two cumulative sums); one Python step per
    # token, 2M of them, would take about a second, over 50x
    assert_within(lambda: split_segments(mask), lambda: (mask.cumsum(1), mask.flip(1).cumsum(1)), times=20)


# ----------------------------------------------------------------------------- character spans


def test_split_spans_last_assistant_is_summary():
    spans = [(0, 10, "system"), (10, 20, "user"), (25, 40, "assistant"), (45, 60, "tool"), (65, 90, "assistant")]
    assert split_spans(spans) == ([(25, 40)], [(65, 90)])
    assert split_spans(spans[:3]) == ([], [(25, 40)])
    assert split_spans(spans[:2]) == ([], [])


def test_split_spans_merges_touching_and_options():
    spans = [(30, 40, "assistant"), (0, 10, "assistant"), (10, 20, "assistant"), (50, 50, "assistant")]
    assert split_spans(spans) == ([(0, 20)], [(30, 40)])
    assert split_spans(spans, last_is_tool_call=True, final_tool_turn="process") == ([(0, 20), (30, 40)], [])
    assert split_spans(spans, last_is_tool_call=True) == ([(0, 20)], [(30, 40)])
    assert split_spans([(0, 5, "gpt"), (7, 9, "gpt")], learnable_roles=("gpt",)) == ([(0, 5)], [(7, 9)])


def test_split_spans_agrees_with_token_masks():
    """Spans turned into a per-character mask give the same split as split_segments."""
    spans = [(2, 5, "assistant"), (8, 9, "assistant"), (12, 15, "assistant")]
    mask = torch.zeros(1, 16)
    for s, e, _ in spans:
        mask[0, s:e] = 1
    proc, summ = split_spans(spans)
    p, s, _, _ = split_segments(mask)
    assert torch.equal(p[0], span_mask(16, *proc)) and torch.equal(s[0], span_mask(16, *summ))
