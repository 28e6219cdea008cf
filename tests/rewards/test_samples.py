"""The shipped RL preview rows (docs/method.md#rl-rows) score without error; their bare-name gold is flagged."""

import json

import pytest

from slca.rewards import compute_score_batch

from .conftest import block, resp
from tests.reference import RL_PREVIEW

SAMPLES = RL_PREVIEW


def load_rows():
    return [json.loads(line) for line in SAMPLES.read_text().splitlines() if line.strip()]


def test_preview_rows_score_without_error():
    rows = load_rows()
    assert len(rows) == 5
    texts, gts, extras = [], [], []
    for r in rows:
        g = r["reward_model"]["ground_truth"]
        gold = g["gold_tool_calls"]
        following = "".join(block({"name": n, "arguments": {}}) + resp('{"result": "done"}') for n in gold)
        texts += [following + "assistant\nHere is the result: done.", "assistant\nA direct answer without tools."]
        gts += [g, g]
        extras += [r["extra_info"], r["extra_info"]]
    out = compute_score_batch(["toucan_toolcall"] * len(texts), texts, gts, extras)
    for (r, g) in zip(out, gts):
        assert r["reward_error"] == 0 and not r["error_type"].startswith("internal"), r["error_type"]
        has_gold = bool(g["gold_tool_calls"])
        assert r["gold_names_only"] == int(has_gold)
        assert r["gold_tool_count"] == len(g["gold_tool_calls"])
    for i, g in enumerate(gts[::2]):
        follow, direct = out[2 * i], out[2 * i + 1]
        assert follow["name_f1"] == 1.0 and follow["format_score"] == (1.0 if g["gold_tool_calls"] else 0.0)
        if g["gold_tool_calls"]:
            # names-only gold: key/value are vacuously 1; parallel compares one call to the whole list
            assert follow["key_score"] == follow["value_score"] == 1.0
            assert follow["parallel_score"] == float(len(g["gold_tool_calls"]) == 1)
            assert direct["should_call_but_no_call"] == 1 and direct["score"] == -0.5
        else:
            assert direct["process_score"] == pytest.approx(0.9) and direct["weighted_score_norm"] == pytest.approx(0.45)
