"""metrics.jsonl stays one JSON object per line, even after a writer was killed mid-line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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


# W&B in its own process: a killed W&B service would stay the broken service of this test worker.
_STOPPED_WITH_ITS_SERVICE = """
import sys
from pathlib import Path
import psutil
from slca.config.groups.logger import WandbLogger
from slca.signals import Terminated
from slca.tracking.tracker import open_tracker

tracker = open_tracker(Path(sys.argv[1]), WandbLogger(mode="offline"), spec_dict={}, run_name="stopped")
try:
    with tracker:
        tracker.log({"loss": 1.0}, step=0, stage="rl")
        # what a scheduler's stop does to the W&B service, a child in the job's process group
        service = [p for p in psutil.Process().children(recursive=True) if p.name().startswith("wandb")]
        assert service, "W&B started no service process"
        for process in service:
            process.kill()
        psutil.wait_procs(service, timeout=10)
        raise Terminated()
except Terminated:
    print("still Terminated")
"""


@pytest.mark.slow
def test_a_stop_that_also_killed_wandbs_service_stays_a_stop_and_keeps_every_record(tmp_path: Path) -> None:
    """A requeued SLURM job used to end as 'unexpected error' (W&B's lost socket replaced the SIGTERM)."""
    done = subprocess.run([sys.executable, "-c", _STOPPED_WITH_ITS_SERVICE, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "still Terminated" in done.stdout
    assert "slca: W&B could not finish its run" in done.stderr
    records = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [(r["step"], r["loss"]) for r in records] == [(0, 1.0)]
