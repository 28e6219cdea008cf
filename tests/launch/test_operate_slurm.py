"""Operating a sweep on the real one-node test cluster: `slca status` sees its job queued and running,
`slca cancel` stops it with scancel and records it, and `slca sweep` resubmits it unless told not to."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.badinput import run_cli
from tests.launch.conftest import SLURM, TOY, job_field, wait_until

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def test_a_running_job_shown_by_status_is_cancelled_through_scancel_and_resubmitted_by_the_next_sweep_unless_skipped(
    slurm_cluster: Path, caches: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    sweep_file, sweep_dir = tmp_path / "long.yaml", tmp_path / "runs" / "sweeps" / "long"
    # A step budget far out of reach: the job is still running when it is cancelled.
    sweep_file.write_text(yaml.safe_dump({"name": "long", "experiment": "embedded_smoke", "grid": {"run.seed": [0]},
                                          "overrides": [*TOY[1:], *SLURM, *caches, "logger=none", "train.rl.max_steps=100000", "train.rl.epochs=10000"]}))
    assert run_cli(["sweep", sweep_file, "--dir", sweep_dir], capsys).code == 0
    (entry,) = json.loads((sweep_dir / "manifest.json").read_text())["runs"].values()
    first, run_dir = entry["job_id"], Path(entry["run_dir"])

    def view() -> dict:
        result = run_cli(["status", sweep_dir, "--json"], capsys)
        assert result.code == 0, result.err
        (only,) = json.loads(result.out)
        return only

    seen = {view()["state"]}
    assert seen <= {"pending", "running"}, seen
    try:
        # Running, and slca's job has started the run (its record exists), so SIGTERM reaches the run itself.
        running = wait_until(lambda: (v := view())["state"] == "running" and (run_dir / "job.json").is_file() and v, "the job to run", 300)
        assert running["job_id"] == first and running["launcher"] == "slurm" and running["requeues"] == 0
        result = run_cli(["cancel", "run.seed"], capsys)  # a unique prefix of the run's id, looked up under runs/
    finally:
        if job_field(first, "JobState") in ("PENDING", "RUNNING"):
            subprocess.run(["scancel", first], check=False, timeout=60)
    assert result.code == 0, result.err
    assert f"run.seed-0: cancelled (scancel {first})" in result.out
    wait_until(lambda: job_field(first, "JobState") in ("CANCELLED", ""), "the job to end", 120)
    cancelled = view()
    assert cancelled["state"] == "cancelled" and cancelled["detail"].startswith("cancelled at ")
    record = json.loads((run_dir / "job.json").read_text())
    assert (record["state"], record["cancelled_job"], record["attempt"]) == ("cancelled", first, 1)
    assert run_cli(["logs", run_dir], capsys).code == 0

    skipped = run_cli(["sweep", sweep_file, "--dir", sweep_dir, "--skip-cancelled"], capsys)
    assert "run.seed-0: cancelled at " in skipped.out and "skipped (--skip-cancelled)" in skipped.out and "nothing to submit" in skipped.out
    again = run_cli(["sweep", sweep_file, "--dir", sweep_dir], capsys)
    (entry,) = json.loads((sweep_dir / "manifest.json").read_text())["runs"].values()
    second = entry["job_id"]
    try:
        assert again.code == 0, again.err
        assert "run.seed-0: cancelled (cancelled at " in again.out and "resubmitting" in again.out
        assert second != first and len(entry["submissions"]) == 2
        resubmitted = view()
        assert resubmitted["state"] in ("pending", "running") and resubmitted["job_id"] == second
    finally:
        subprocess.run(["scancel", second], check=False, timeout=60)
