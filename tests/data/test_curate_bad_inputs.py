"""`slca data curate` on bad input: one stderr line naming the file, row, field, flag or config path;
the input, the output directory and the cache are left exactly as they were."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.badinput import assert_refused, run_cli, snapshot
from tests.data.curate_helpers import synthetic_rl, toy_overrides

NOWHERE = "http://127.0.0.1:9/v1"  # resolving an endpoint loads nothing; every case is refused before a request


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    work = tmp_path_factory.mktemp("curate-bad")
    source = synthetic_rl(work)
    table = pq.read_table(source)
    rows = table.to_pylist()[:5]
    rows[2]["data_source"] = ""
    bad_row = work / "bad_row.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), bad_row)
    rows = table.to_pylist()[:5]
    rows[3]["reward_model"]["ground_truth"]["gold_tool_calls"] = '[[{"name": "x", "arguments": {"amount": NaN}}]]'
    nan_gold = work / "nan_gold.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), nan_gold)
    no_rows = work / "no_rows.parquet"
    pq.write_table(table.slice(0, 0), no_rows)
    garbled = work / "garbled.parquet"
    garbled.write_bytes(b"PAR1 this is not parquet")
    jsonl = work / "rows.jsonl"
    jsonl.write_text('{"prompt": []}\n')
    out_file = work / "out_file"
    out_file.write_text("mine\n")
    foreign = work / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me\n")
    empty_dir = work / "empty_model"
    empty_dir.mkdir()
    run_dir = work / "unfinished_run"
    run_dir.mkdir()
    (run_dir / "spec.yaml").write_text("experiment: x\n")
    return {"work": work, "good": source, "bad_row": bad_row, "nan_gold": nan_gold, "no_rows": no_rows, "garbled": garbled, "jsonl": jsonl, "out_file": out_file,
            "foreign": foreign, "empty_model": empty_dir, "run": run_dir}


# (case, input key, --out (key or name), extra argv, mentions)
CASES = [
    ("missing input", "missing", "out", [], ["missing.parquet", "no such file"]),
    ("input not parquet", "jsonl", "out", [], ["rows.jsonl", "parquet"]),
    ("garbled parquet", "garbled", "out", [], ["garbled.parquet", "parquet"]),
    ("bad row", "bad_row", "out", [], ["bad_row.parquet", "row 2", "data_source"]),
    ("NaN in the gold", "nan_gold", "out", [], ["nan_gold.parquet", "row 3", "gold_tool_calls[0][0].arguments.amount", "NaN"]),
    ("no rows", "no_rows", "out", [], ["no_rows.parquet", "empty input"]),
    ("out is a file", "good", "out_file", [], ["out_file", "not a directory"]),
    ("out holds other files", "good", "foreign", [], ["foreign", "notes.txt"]),
    ("out holds the input", "good", "input_parent", [], ["--out contains the input"]),
    ("zero rollouts", "good", "out", ["--rollouts", "0"], ["train.curate.rollouts"]),
    ("too many rollouts", "good", "out", ["--rollouts", "5000"], ["train.curate.rollouts"]),
    ("reversed turns", "good", "out", ["--turns", "6-2"], ["train.curate.max_turns", "6"]),
    ("turns not a range", "good", "out", ["--turns", "two"], ["--turns"]),
    ("unknown keep mode", "good", "out", ["--keep", "all"], ["--keep"]),
    ("negative gold calls", "good", "out", ["--max-gold-calls", "-1"], ["train.curate.max_gold_calls"]),
    ("zero batch", "good", "out", ["--batch-prompts", "0"], ["train.curate.batch_prompts"]),
    ("unknown override", "good", "out", ["train.curate.nope=1"], ["train.curate.nope"]),
    ("policy path missing", "good", "out", ["--policy", "no/such/model"], ["--policy", "no/such/model"]),
    ("policy dir not a model", "good", "out", ["--policy", "{empty_model}"], ["--policy", "config.json"]),
    ("policy run without a model", "good", "out", ["--policy", "{run}"], ["--policy", "no finished sft or rl stage"]),
    ("policy latest outside a run", "good", "out", ["--policy", "latest"], ["--policy latest"]),
    ("cache is a file", "good", "out", ["--cache", "{out_file}"], ["--cache", "out_file", "exists and is not a directory"]),
    ("cache below a file", "good", "out", ["--cache", "{out_file}/sub"], ["--cache directory", "out_file is not a directory"]),
]


@pytest.mark.parametrize("case,source,out,extra,mentions", CASES, ids=[c[0] for c in CASES])
def test_a_bad_curate_invocation_is_one_line_and_changes_nothing(files, capsys, case, source, out, extra, mentions) -> None:
    work = files["work"]
    source_path = files.get(source, work / "missing.parquet")
    out_path = {"input_parent": source_path.parent}.get(out, files.get(out, work / "new_out"))
    cache = work / "cache"
    extra = [e.format(**files) for e in extra]
    overrides = [e for e in extra if "=" in e and not e.startswith("-")]
    flags = [e for e in extra if e not in overrides]
    policy = [] if "--policy" in flags else ["--policy", NOWHERE]
    watched = [source_path, out_path, cache, work / "new_out"]
    before = snapshot(watched)
    result = run_cli(["data", "curate", source_path, *toy_overrides(work), *overrides, "--out", out_path, "--cache", cache,
                      "--no-progress", *policy, *flags], capsys)
    assert_refused(result, *mentions)
    assert snapshot(watched) == before


def test_the_old_command_name_is_one_line_naming_slca_data_curate_and_changes_nothing(files, capsys) -> None:
    work = files["work"]
    watched = [files["good"], work / "cache", work / "new_out"]
    before = snapshot(watched)
    result = run_cli(["data", "filter", files["good"], "--out", work / "new_out", "--policy", NOWHERE, "--help"], capsys)
    assert result.code == 2 and result.out == ""
    assert result.err.strip().splitlines() == ["slca data filter: renamed to slca data curate (see slca data curate --help)"]
    assert snapshot(watched) == before


def test_slca_data_help_lists_curate_and_not_the_old_name(capsys) -> None:
    result = run_cli(["data", "--help"], capsys)
    assert result.code == 0 and "\n    curate " in result.out and "filter" not in result.out
