"""`slca data ...` sub-commands through the `slca` entry, and the cheap import."""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys

from slca.cli import main
from slca.data.cli import register
from slca.data.io import read_rows, write_rows


def test_register_adds_data_commands():
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    for cmd in ("validate", "convert", "prepare", "synth", "stats"):
        args = parser.parse_args(["data", cmd, *{"validate": ["f", "--split", "rl"], "convert": ["a", "b"],
                                                   "prepare": ["a", "--out", "o"], "synth": ["--out", "o"],
                                                   "stats": ["f", "--split", "sft"]}[cmd]])
        assert callable(args.func)


def test_validate_exit_codes_and_rejects(synth_set, tmp_path, capsys):
    assert main(["data", "validate", str(synth_set.rl), "--split", "rl"]) == 0
    rows = list(read_rows(synth_set.rl))
    bad = copy.deepcopy(rows[2])
    bad["reward_model"]["ground_truth"]["allowed_tools"] = []
    src = tmp_path / "rl.jsonl"
    write_rows(src, iter(rows[:2] + [bad] + rows[2:5]))
    capsys.readouterr()
    assert main(["data", "validate", str(src), "--split", "rl"]) == 1
    captured = capsys.readouterr()
    # every bad row is listed on stdout; stderr holds one line naming the file and the first bad row
    assert "row 2: reward_model.ground_truth.allowed_tools: empty" in captured.out
    (line,) = captured.err.splitlines()
    assert str(src) in line and "1 of 6 rows invalid" in line and "row 2: reward_model.ground_truth.allowed_tools" in line
    out = tmp_path / "clean.parquet"
    assert main(["data", "validate", str(src), "--split", "rl", "--on-error", "skip", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["rows_in"], summary["rows_out"], summary["rows_rejected"]) == (6, 5, 1)
    assert sum(1 for _ in read_rows(out)) == 5
    (rej,) = read_rows(tmp_path / "clean.rejects.jsonl")
    assert rej["index"] == 2 and rej["row"] == bad


def test_synth_convert_prepare_stats(tmp_path, capsys):
    d = tmp_path / "syn"
    assert main(["data", "synth", "--out", str(d), "--n-sft", "60", "--n-rl", "20", "--n-eval", "10", "--seed", "9"]) == 0
    assert main(["data", "convert", str(d / "sft.parquet"), str(tmp_path / "lf" / "s.jsonl"), "--to", "llamafactory"]) == 0
    assert "s" in json.loads((tmp_path / "lf" / "dataset_info.json").read_text())
    capsys.readouterr()
    assert main(["data", "prepare", str(d / "sft_full.parquet"), "--out", str(tmp_path / "p"), "--eval-size", "8", "--json"]) == 0
    funnel = json.loads(capsys.readouterr().out)
    assert funnel["eval_trajectories"] == 8 and funnel["raw"] == funnel["valid"]
    assert main(["data", "stats", str(d / "rl.parquet"), "--split", "rl", "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["rows"] == 20 and 2 <= st["tools_per_row"]["min"] <= st["tools_per_row"]["max"] <= 4
    assert st["calls_per_step"]["max"] >= 1 and st["turns_per_row"]["min"] >= 2


def test_import_is_cheap():
    code = ("import sys, slca.data.cli, slca.data.schemas, slca.data.io, slca.data.convert, slca.data.prepare, "
            "slca.data.synth, slca.data.stats; "
            "print(sorted(m for m in ('pyarrow', 'pandas', 'torch', 'hydra', 'wandb', 'verl', 'slca.cli') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
