"""Curation's pure parts: keep modes, structural reasons, the histogram and the cache file."""

from __future__ import annotations

import json

import pytest

from slca.curate.cache import OutcomeCache
from slca.curate.rules import KEEP_MODES, CurateFunnel, pass_rate_histogram, structural_reason
from slca.curate.run import _usable


@pytest.mark.parametrize("k", [1, 2, 8])
def test_each_keep_mode_drops_exactly_the_outcome_patterns_it_names(k: int) -> None:
    for s in range(k + 1):
        all_correct, all_wrong = s == k, s == 0
        assert KEEP_MODES.get("not_all_correct")(s, k) == ("all_correct" if all_correct else None)
        assert KEEP_MODES.get("not_all_wrong")(s, k) == ("all_wrong" if all_wrong else None)
        # mixed keeps only 0 < s < k (with k = 1 nothing is mixed); all-correct is named first
        assert KEEP_MODES.get("mixed")(s, k) == ("all_correct" if all_correct else "all_wrong" if all_wrong else None)


def test_structural_reasons_count_dialogue_turns_and_gold_calls_over_all_steps() -> None:
    def row(roles: list[str], gold: list) -> dict:
        return {"prompt": [{"role": r, "content": "x"} for r in roles], "reward_model": {"ground_truth": {"gold_tool_calls": json.dumps(gold)}}}

    two_steps = [[{"name": "a"}, {"name": "b"}], [{"name": "c"}]]
    r = row(["system", "user", "assistant", "tool", "user"], two_steps)  # 3 turns, 3 calls
    assert structural_reason(r, None, None, None) is None
    assert structural_reason(r, 4, None, None) == "turns" and structural_reason(r, None, 2, None) == "turns"
    assert structural_reason(r, 3, 3, 3) is None and structural_reason(r, 3, 3, 2) == "gold_calls"
    assert structural_reason(row(["user"], []), 1, 1, 0) is None  # a prompt that needs no call makes 0 calls


def test_the_histogram_has_every_bin_and_the_funnel_refuses_counts_that_do_not_add_up() -> None:
    assert pass_rate_histogram([0, 2, 2, 4], 4) == {"0/4": 1, "1/4": 0, "2/4": 2, "3/4": 0, "4/4": 1}
    funnel = CurateFunnel(rows_in=3, kept=1, rolled_out=2, successes={0: 1, 2: 0}, histogram={"0/1": 1, "1/1": 1})
    funnel.dropped["turns"] = 2
    funnel.check()
    funnel.dropped["turns"] = 1
    with pytest.raises(ValueError, match="does not reconcile"):
        funnel.check()


def test_the_cache_ignores_a_torn_line_and_outcomes_curation_could_not_have_written(tmp_path) -> None:
    cache = OutcomeCache(tmp_path)
    cache.put("a", [0, 2, "prompt_too_long"])
    with open(tmp_path / "outcomes.jsonl", "a") as handle:
        handle.write('{"key": "b", "outcomes": [1, ')  # killed mid-write
    reread = OutcomeCache(tmp_path)
    assert reread.get("a") == [0, 2, "prompt_too_long"] and reread.get("b") is None
    assert _usable(reread.get("a"), 3, 2)
    assert not _usable([0, 3, 1], 3, 2) and not _usable([0, "nope", 1], 3, 2) and not _usable([0, 1], 3, 2)
    assert not _usable([0, True, 1], 3, 2) and not _usable(None, 3, 2)
