"""A resumed stage drops what an interrupted attempt logged after its checkpoint (no step twice)."""

from __future__ import annotations

import json
from pathlib import Path

from slca.tracking import Tracker


def test_rewind_drops_only_the_matching_records_keeps_foreign_lines_and_appends_after_them(tmp_path: Path) -> None:
    with Tracker(tmp_path) as tracker:
        for step in range(1, 6):
            tracker.log({"loss": step}, step=step, stage="sft")
        for step in range(1, 5):
            tracker.log({"reward": step}, step=step, stage="rl")
    with open(tmp_path / "metrics.jsonl", "a") as handle:
        handle.write("not json, kept as it is\n")
    with Tracker(tmp_path) as tracker:
        dropped = tracker.rewind(lambda r: r["stage"] == "rl" and r["step"] > 2)
        tracker.log({"reward": 30}, step=3, stage="rl")
    assert dropped == 2
    lines = (tmp_path / "metrics.jsonl").read_text().splitlines()
    assert "not json, kept as it is" in lines
    records = [json.loads(line) for line in lines if line.startswith("{")]
    assert [(r["stage"], r["step"]) for r in records] == [*(("sft", s) for s in range(1, 6)), ("rl", 1), ("rl", 2), ("rl", 3)]
    assert records[-1]["reward"] == 30
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no temporary left behind"


def test_rewind_with_nothing_to_drop_leaves_the_file_untouched(tmp_path: Path) -> None:
    with Tracker(tmp_path) as tracker:
        tracker.log({"loss": 1.0}, step=1, stage="sft")
    before = (tmp_path / "metrics.jsonl").stat()
    with Tracker(tmp_path) as tracker:
        assert tracker.rewind(lambda r: r["step"] > 1) == 0
    assert (tmp_path / "metrics.jsonl").stat().st_ino == before.st_ino
