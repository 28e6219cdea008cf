"""Gold normalisation and ground-truth validation (docs/method.md#ground-truth, docs/method.md#reference-quirks item 1)."""

import json

import numpy as np

from slca.rewards.gold import (
    GOLD_JSON_ERROR,
    INVALID_GROUND_TRUTH,
    MISSING_ALLOWED_TOOLS,
    GoldCall,
    GoldMemo,
    normalise_gold,
    read_ground_truth,
)


def test_nested_steps_with_arguments():
    g = normalise_gold([[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}], [{"name": "c"}]])
    assert g.nested and not g.names_only
    assert [len(s) for s in g.steps] == [2, 1]
    assert [c.name for c in g.flat] == ["a", "b", "c"]
    assert g.with_args == (GoldCall("a", {"x": 1}),)
    assert g.first_step_count == 2
    assert dict(g.name_counts) == {"a": 1, "b": 1, "c": 1}


def test_flat_list_is_one_step():
    g = normalise_gold([{"name": "a", "arguments": {"x": 1}}, {"name": "a", "parameters": {"y": 2}}])
    assert not g.nested
    assert len(g.steps) == 1 and g.first_step_count == 2
    assert [c.arguments for c in g.with_args] == [{"x": 1}, {"y": 2}]
    assert g.name_counts["a"] == 2


def test_flat_bare_names_are_flagged():
    g = normalise_gold(["t1", "t1", "t2"])
    assert g.names_only and g.first_step_count == 3 and g.with_args == ()
    assert not normalise_gold(["t1", {"name": "t2", "arguments": {"q": 1}}]).names_only


def test_json_string_and_bad_json():
    raw = [[{"name": "a", "arguments": json.dumps({"k": "v"})}]]
    g = normalise_gold(json.dumps(raw))
    assert g.with_args[0].arguments == {"k": "v"}
    bad = normalise_gold("[{not json")
    assert bad.flat == () and bad.error == GOLD_JSON_ERROR
    assert normalise_gold(None).flat == () and normalise_gold([]).flat == ()


def test_drops_non_dict_items_and_empty_steps():
    g = normalise_gold([[1, None, "a"], [], [{"name": "b"}], "stray"])
    assert [c.name for c in g.flat] == ["a", "b"]
    assert len(g.steps) == 2
    assert g.n_dropped == 3


def test_numpy_arrays_from_parquet():
    steps = np.array([np.array([{"name": "a", "arguments": {"x": 1}}], dtype=object)], dtype=object)
    g = normalise_gold(steps)
    assert g.nested and g.flat[0].arguments == {"x": 1}
    g2 = normalise_gold(np.array(["a", "b"], dtype=object))
    assert g2.names_only and len(g2.flat) == 2


def test_argument_strings_that_are_not_objects_count_as_no_args():
    g = normalise_gold([{"name": "a", "arguments": "[1, 2]"}, {"name": "b", "arguments": "oops"}])
    assert g.with_args == ()


def test_read_ground_truth_errors():
    assert read_ground_truth("nope").error == INVALID_GROUND_TRUTH
    assert read_ground_truth({"gold_tool_calls": []}).error == MISSING_ALLOWED_TOOLS
    assert read_ground_truth({"allowed_tools": []}).error == MISSING_ALLOWED_TOOLS
    ok = read_ground_truth({"allowed_tools": np.array(["a", "b"]), "gold_tool_calls": ["a"], "question_content": "q?"})
    assert ok.error is None and ok.allowed == frozenset({"a", "b"}) and ok.question == "q?"
    assert read_ground_truth({"allowed_tools": '["a"]'}).allowed == frozenset({"a"})


def test_a_gold_memo_reads_each_ground_truth_object_once_and_two_memos_share_nothing():
    gt1 = {"allowed_tools": ["a"], "gold_tool_calls": ["a"]}
    gt2 = {"allowed_tools": ["a"], "gold_tool_calls": ["a", "a"]}
    memo = GoldMemo()
    r1 = memo(gt1)
    assert memo(gt1) is r1
    assert len(memo(gt2).gold.flat) == 2
    assert GoldMemo()(gt1) is not r1 and GoldMemo()(gt1) == r1
