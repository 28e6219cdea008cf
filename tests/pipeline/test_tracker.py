"""metrics.jsonl stays one JSON object per line, even after a writer was killed mid-line."""

from __future__ import annotations

import json
from pathlib import Path

from slca.tracking.tracker import Tracker


def test_a_line_torn_by_a_kill_is_dropped_and_the_next_lines_stay_readable(tmp_path: Path) -> None:
    with Tracker(tmp_path) as tracker:
        tracker.log({"loss": 1.5}, step=1, stage="sft")
        tracker.log({"loss": 1.25}, step=2, stage="sft")
    whole = (tmp_path / "metrics.jsonl").read_bytes()
    (tmp_path / "metrics.jsonl").write_bytes(whole + b'{"stage": "sft", "step": 3, "lo')  # killed mid-write

    with Tracker(tmp_path) as tracker:
        tracker.log({"loss": 1.0}, step=3, stage="sft")
    lines = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [(line["step"], line["loss"]) for line in lines] == [(1, 1.5), (2, 1.25), (3, 1.0)]


def test_non_finite_values_are_written_as_null_and_an_empty_file_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "metrics.jsonl").write_bytes(b"")
    with Tracker(tmp_path) as tracker:
        tracker.log({"loss": float("nan"), "gain": float("inf"), "n": 3}, step=1, stage="rl")
    (line,) = (tmp_path / "metrics.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["loss"] is None and record["gain"] is None and record["n"] == 3
