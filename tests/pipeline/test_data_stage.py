"""The data stage validates Toucan split files row by row, honouring `data.on_error`:
fail stops at the first bad row naming file, row and field; skip publishes the valid rows and the
rejects inside the stage directory and counts both. Files are real parquet / JSONL written with
pyarrow from a generated set."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from slca.config.groups.data import SyntheticData
from tests.badinput import assert_refused, run_cli, snapshot

BAD_RL_ROWS = {2: "data_source", 5: "tools"}
BAD_SFT_LINE = 4


@pytest.fixture
def toucan_files(tmp_path: Path) -> tuple[dict[str, Path], dict[str, list[dict]]]:
    """Toucan-layout sft (.jsonl with one undecodable line), rl (.parquet with two bad rows) and a clean
    eval (.parquet); returns the paths and the rows a correct `skip` must keep."""
    from slca.data.synth import synthesize

    made = synthesize(SyntheticData(seed=1, n_sft=20, n_rl=10, n_eval=5), tmp_path / "synth")
    out = tmp_path / "toucan"
    out.mkdir()

    rl = pq.read_table(made.rl)
    rl_rows = rl.to_pylist()
    damaged = [dict(row) for row in rl_rows]
    damaged[2]["data_source"] = ""
    damaged[5]["tools"] = "[{not json"
    pq.write_table(pa.Table.from_pylist(damaged, schema=rl.schema), out / "rl.parquet")

    sft_rows = pq.read_table(made.sft).to_pylist()
    lines = [json.dumps(row) for row in sft_rows]
    lines.insert(BAD_SFT_LINE, '{"conversations": [')
    (out / "sft.jsonl").write_text("\n".join(lines) + "\n")

    (out / "eval.parquet").write_bytes(Path(made.eval).read_bytes())
    files = {"sft": out / "sft.jsonl", "rl": out / "rl.parquet", "eval": out / "eval.parquet"}
    keep = {"sft": sft_rows, "rl": [row for i, row in enumerate(rl_rows) if i not in BAD_RL_ROWS]}
    return files, keep


def _argv(files: dict[str, Path], run: Path, on_error: str) -> list[str]:
    return ["run", "experiment=embedded_demo", "logger=none", "data=toucan", "run.stages=[data]", f"run.dir={run}",
            f"data.on_error={on_error}", *(f"data.{split}_path={path}" for split, path in files.items())]


def test_skip_publishes_valid_rows_and_rejects_in_the_stage_dir_and_counts_them(
    toucan_files: tuple[dict[str, Path], dict[str, list[dict]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from slca.data.io import read_rows

    files, keep = toucan_files
    before = snapshot(files.values())
    run = tmp_path / "run"
    result = run_cli(_argv(files, run, "skip"), capsys)
    assert result.code == 0, result.err
    assert snapshot(files.values()) == before  # inputs are read, never rewritten

    recorded = json.loads((run / "data" / "result.json").read_text())
    counts = recorded["validation"]
    assert (counts["rl"]["rows_in"], counts["rl"]["rows_out"], counts["rl"]["rows_rejected"]) == (10, 8, 2)
    assert (counts["sft"]["rows_in"], counts["sft"]["rows_out"], counts["sft"]["rows_rejected"]) == (21, 20, 1)
    assert counts["eval"]["rows_rejected"] == 0

    assert recorded["rl"] == "data/rl.parquet" and recorded["sft"] == "data/sft.jsonl"
    assert pq.read_table(run / recorded["rl"]).to_pylist() == keep["rl"]
    assert list(read_rows(run / recorded["sft"])) == keep["sft"]
    assert recorded["eval"] == str(files["eval"])  # a clean split is read in place, not copied
    assert not (run / "data" / "eval.parquet").exists()
    eval_rejects = list((run / "data" / "rejects" / "eval").glob("*"))
    assert all(p.read_text() == "" for p in eval_rejects)

    rl_rejects = [json.loads(line) for line in (run / counts["rl"]["rejects"]).read_text().splitlines()]
    assert {r["index"]: r["errors"][0]["field"].split("[")[0] for r in rl_rejects} == BAD_RL_ROWS
    sft_rejects = [json.loads(line) for line in (run / counts["sft"]["rejects"]).read_text().splitlines()]
    assert [r["index"] for r in sft_rejects] == [BAD_SFT_LINE]
    assert not list((run / "data").glob(".*.tmp")), "no temporaries left behind"


def test_fail_names_file_row_and_field_and_publishes_nothing(
    toucan_files: tuple[dict[str, Path], dict[str, list[dict]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files, _ = toucan_files
    files = {**files, "sft": files["eval"].with_name("sft_clean.jsonl")}
    from slca.data.synth import synthesize

    clean = synthesize(SyntheticData(seed=1, n_sft=20, n_rl=10, n_eval=5), tmp_path / "clean")
    files["sft"].write_text("".join(json.dumps(row) + "\n" for row in pq.read_table(clean.sft).to_pylist()))
    run = tmp_path / "run"
    result = run_cli(_argv(files, run, "fail"), capsys)
    assert_refused(result, str(files["rl"]), "data.rl_path", "row 2", "data_source")
    left = sorted(p.name for p in (run / "data").rglob("*"))
    assert left == ["started.json"]  # no partial copy, no rejects file: only the note of which spec started it
