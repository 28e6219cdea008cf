"""End to end: two real embedded runs side by side, the trainer's per-prompt outcome log, and the
report of the sweep and of one run opened in real headless Chromium (Debian's `chromium`): it
renders, every image loads, nothing is logged as an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.badinput import run_cli
from tests.report.browser import chromium_binary, view_page
from tests.report.conftest import STEPS_PER_EPOCH
from tests.report.rundirs import colour_present, html_tables

pytestmark = pytest.mark.slow  # two embedded runs (SFT, 8 RL steps, evaluation) before the browser opens

TAB10_BLUE, TAB10_ORANGE = (31, 119, 180), (255, 127, 14)
SECTIONS = ["Runs", "Reward and its components", "Per-segment advantages", "Credit misattribution", "Zero-variance, all-correct and skipped prompts",
            "Stability of all-correct prompts", "Wall time: rollout, reward, update", "Policy entropy", "Evaluation"]


def rl_lines(run_dir: Path) -> list[dict]:
    lines = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [line for line in lines if line["stage"] == "rl" and "prompts/all_correct" in line]


def test_the_trainer_logs_each_prompt_outcome_once_per_epoch(sweep_dir: Path) -> None:
    for run, expected in (("slca_grpo", None), ("grpo", 1)):
        lines = rl_lines(sweep_dir / run)
        assert [line["step"] for line in lines] == list(range(1, 9))
        by_epoch: dict[int, list[int]] = {}
        for line in lines:
            entries = line["prompts/all_correct"]
            assert len(entries) == 4  # prompts_per_step
            assert {e[0] for e in entries} == {(line["step"] - 1) // STEPS_PER_EPOCH}
            flags = [e[2] for e in entries]
            # A prompt is all-correct only if its every rollout succeeded: never more often than rollouts succeed.
            assert sum(flags) / len(flags) <= line["reward/success_rate"] + 1e-9
            if expected is not None:  # threshold 0: every rollout is a success
                assert flags == [expected] * 4 and line["reward/success_rate"] == 1.0
            elif line["reward/success_rate"] == 0.0:
                assert flags == [0] * 4
            for epoch, prompt, _ in entries:
                by_epoch.setdefault(epoch, []).append(prompt)
        assert {e: sorted(p) for e, p in by_epoch.items()} == {e: list(range(8)) for e in range(4)}  # each prompt once an epoch


def test_the_sweep_report_renders_in_chromium_with_every_image_loaded(sweep_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sweep-report"
    result = run_cli(["report", str(sweep_dir), "--out", str(out)], capsys)
    assert result.code == 0, result.err
    view = view_page(chromium_binary(), out / "index.html", tmp_path / "profile")
    (tmp_path / "screenshot.png").write_bytes(view.screenshot)
    assert view.errors == []
    assert view.state["title"] == "slca report: sweep (2 runs)" and view.state["headings"] == SECTIONS
    images = view.state["images"]
    assert {i["src"] for i in images} == {p.name for p in out.glob("*.png")} == {
        "reward.png", "advantages.png", "credit.png", "fractions.png", "stability.png", "time.png", "entropy.png"}
    assert all(i["complete"] and i["width"] > 0 and i["height"] > 0 for i in images), images
    assert view.state["nodata"] == []
    for image in ("reward.png", "time.png", "entropy.png"):  # both runs drawn
        assert colour_present(out / image, TAB10_BLUE) and colour_present(out / image, TAB10_ORANGE), image
    # Only the GRPO run (first in the sweep: blue) had all-correct prompts: it alone is on the stability plot, at 1.
    assert colour_present(out / "stability.png", TAB10_BLUE) and not colour_present(out / "stability.png", TAB10_ORANGE)
    tables = html_tables((out / "index.html").read_text())
    stability = [t for t in tables if t[0][:2] == ["run", "k"]][0]
    assert stability[1:] == [["grpo", "1", "3", "24", "1"], ["grpo", "2", "2", "16", "1"]]
    cells = [t for t in tables if t[0][:3] == ["run", "model", "protocol"]][0]
    assert sorted((row[0], row[1]) for row in cells[1:]) == [("grpo", "rl"), ("grpo", "sft"), ("slca_grpo", "rl"), ("slca_grpo", "sft")]
    assert len(view.screenshot) > 10_000 and view.screenshot[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_single_run_report_lands_in_the_run_directory_and_renders(sweep_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = sweep_dir / "slca_grpo"
    result = run_cli(["report", str(run)], capsys)
    assert result.code == 0 and str(run / "report" / "index.html") in result.out
    view = view_page(chromium_binary(), run / "report" / "index.html", tmp_path / "profile")
    assert view.errors == [] and view.state["title"] == "slca report: slca_grpo"
    assert all(i["complete"] and i["width"] > 0 for i in view.state["images"])
    assert view.state["nodata"] == ["stability"]  # this run never had an all-correct prompt, and says so
    assert "No data" in view.state["text"]
