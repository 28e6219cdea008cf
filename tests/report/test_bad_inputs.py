"""`slca report` on bad input: one line naming the file (and line or field), exit non-zero, and
nothing written or changed, least of all the directory an `--out` would have replaced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from tests.badinput import assert_refused, run_cli, snapshot
from tests.report.rundirs import rl_line, write_run


def good_run(root: Path) -> Path:
    return write_run(root / "run", [rl_line(1, 0, [(0, 1)], reward__score_mean=0.5)])


def metrics_with(line: str) -> Callable[[Path], tuple[list[str], tuple[str, ...]]]:
    def make(root: Path) -> tuple[list[str], tuple[str, ...]]:
        run = good_run(root)
        with open(run / "metrics.jsonl", "a") as fh:
            fh.write(line + "\n" + json.dumps(rl_line(3, 0, [])) + "\n")
        return [str(run)], ("metrics.jsonl", "line 2")

    return make


def missing(root: Path) -> tuple[list[str], tuple[str, ...]]:
    return [str(root / "nowhere")], ("nowhere", "no such directory")


def a_file(root: Path) -> tuple[list[str], tuple[str, ...]]:
    (root / "notes.txt").write_text("hi")
    return [str(root / "notes.txt")], ("notes.txt", "not a directory")


def no_runs(root: Path) -> tuple[list[str], tuple[str, ...]]:
    (root / "empty" / "sub").mkdir(parents=True)
    (root / "empty" / "sub" / "metrics.jsonl").write_text("")
    return [str(root / "empty")], ("empty", "spec.yaml")


def bad_yaml(root: Path) -> tuple[list[str], tuple[str, ...]]:
    run = good_run(root)
    (run / "spec.yaml").write_text("experiment: [unclosed\n")
    return [str(run)], ("spec.yaml", "unreadable")


def yaml_not_a_mapping(root: Path) -> tuple[list[str], tuple[str, ...]]:
    run = good_run(root)
    (run / "spec.yaml").write_text("- a\n- b\n")
    return [str(run)], ("spec.yaml", "mapping")


def broken_results(root: Path) -> tuple[list[str], tuple[str, ...]]:
    run = good_run(root)
    (run / "eval").mkdir()
    (run / "eval" / "results.json").write_text('{"results": [')
    return [str(run)], ("eval/results.json", "unreadable JSON")


def results_not_an_object(root: Path) -> tuple[list[str], tuple[str, ...]]:
    run = good_run(root)
    (run / "results.json").write_text("[1, 2]")
    return [str(run)], ("results.json", "JSON object")


def out_is_the_run(root: Path) -> tuple[list[str], tuple[str, ...]]:
    run = good_run(root)
    return [str(run), "--out", str(run)], ("--out", "would replace")


def out_above_the_run(root: Path) -> tuple[list[str], tuple[str, ...]]:
    run = good_run(root)
    return [str(run), "--out", str(root)], ("--out", "would replace")


def out_is_someone_elses_folder(root: Path) -> tuple[list[str], tuple[str, ...]]:
    run = good_run(root)
    (root / "thesis").mkdir()
    (root / "thesis" / "chapter1.tex").write_text("precious")
    return [str(run), "--out", str(root / "thesis")], ("thesis", "not a report")


def out_is_a_file(root: Path) -> tuple[list[str], tuple[str, ...]]:
    run = good_run(root)
    (root / "out.html").write_text("x")
    return [str(run), "--out", str(root / "out.html")], ("out.html", "not a directory")


CASES = {
    "missing directory": missing,
    "a file, not a directory": a_file,
    "no spec.yaml anywhere below": no_runs,
    "spec.yaml that is not YAML": bad_yaml,
    "spec.yaml that is a list": yaml_not_a_mapping,
    "metrics line that is not JSON": metrics_with('{"stage": "rl", "step": 2,'),
    "metrics line that is a list": metrics_with("[1, 2]"),
    "metrics line without a step": metrics_with('{"stage": "rl", "reward/score_mean": 1}'),
    "metrics line with a text step": metrics_with('{"stage": "rl", "step": "two"}'),
    "metrics line with a boolean step": metrics_with('{"stage": "rl", "step": true}'),
    "metrics line without a stage": metrics_with('{"step": 2}'),
    "results.json cut short": broken_results,
    "results.json that is a list": results_not_an_object,
    "--out is the run directory": out_is_the_run,
    "--out is above the run directory": out_above_the_run,
    "--out is a folder that is not a report": out_is_someone_elses_folder,
    "--out is a file": out_is_a_file,
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_report_input_is_refused_in_one_line_and_changes_nothing(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv, mentions = CASES[case](tmp_path)
    before = snapshot([tmp_path])
    result = run_cli(["report", *argv], capsys)
    assert_refused(result, *mentions)
    assert snapshot([tmp_path]) == before
