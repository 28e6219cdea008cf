"""Evaluation tables: one seed prints as one run, several as mean ± std, the sensitivity and card
tables come from `slca eval`'s results.json, and no shape of file makes the report fail."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from slca.report import build_report
from slca.report.runs import RunData, load_run
from slca.report.tables import eval_tables
from tests.report.rundirs import html_tables, results_v1, write_run


def tables_by_title(run_dir):
    run = load_run(run_dir, run_dir.name)
    return {t.title: t for t in eval_tables([run])}


def test_one_seed_prints_plain_numbers_and_says_once_that_each_is_one_run(tmp_path) -> None:
    run = write_run(tmp_path / "one", [], evals={"results.json": results_v1("rl", n_seeds=1)})
    tables = tables_by_title(run)
    cells = tables["results.json: metrics per protocol cell"]
    assert cells.header == ["model", "protocol", "success", "name_f1"]
    assert cells.rows == [["rl", "native / keep / stronger", "0.500", "0.800"], ["rl", "context / keep / stronger", "0.600", "0.800"]]
    assert "single run" in cells.note
    sens = tables["results.json: sensitivity"]
    assert sens.rows == [["rl", "template", "context − native", "+0.100 ± 0.020", "-0.004 ± 0.001"]]  # no seed row with one seed


def test_several_seeds_print_mean_and_std_and_the_seed_spread_row(tmp_path) -> None:
    run = write_run(tmp_path / "three", [], evals={"results.json": results_v1("rl", n_seeds=3)})
    tables = tables_by_title(run)
    cells = tables["results.json: metrics per protocol cell, mean ± std over 3 seeds"]
    assert cells.rows[1][2:] == ["0.600 ± 0.050", "0.800 ± 0.010"]
    assert tables["results.json: sensitivity"].rows[-1] == ["rl", "seed", "std within a cell", "0.050 ± 0.000", "0.010 ± 0.000"]
    card = dict((row[0], row[1]) for row in tables["results.json: protocol card"].rows)
    assert card["model.weights_sha256"] == "ab" * 6 + "…" and card["decoding.temperature"] == "0.700"
    assert card["software.packages"] == "2 package versions recorded"


def test_a_sweep_adds_a_run_column_and_a_card_column_per_run(tmp_path) -> None:
    write_run(tmp_path / "sweep" / "a", [], evals={"results.json": results_v1("rl", n_seeds=1)})
    write_run(tmp_path / "sweep" / "b", [], evals={"eval/results.json": results_v1("sft", n_seeds=1)})
    index = build_report(tmp_path / "sweep")
    tables = html_tables(index.read_text())
    heads = [t[0] for t in tables]
    assert ["run", "model", "protocol", "success", "name_f1"] in heads
    assert ["field", "a: rl"] in heads and ["field", "b: sft"] in heads


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=True) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["results", "models", "card", "cells", "metrics", "protocol", "sensitivity", "effects", "diffs",
                         "seed_spread", "headline", "mean", "std", "n", "model", "label", "packages"]), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(doc=st.dictionaries(st.sampled_from(["results", "models", "protocol", "schema_version"]), json_values, max_size=4))
def test_no_shape_of_evaluation_file_makes_the_tables_fail(doc) -> None:
    run = RunData("run", Path("run"), {}, [], {"results.json": json.loads(json.dumps(doc))})  # as read from the file
    for table in eval_tables([run]):
        assert all(len(row) == len(table.header) for row in table.rows)
        assert all(isinstance(cell, str) for row in table.rows for cell in row)
