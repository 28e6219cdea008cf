"""Launching on a real one-node SLURM cluster (started by the session fixture; nothing is mocked)."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.badinput import run_cli
from tests.launch.conftest import SLURM, TOY, job_field, scontrol, wait_until

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def _metric_steps(run_dir: Path, stage: str, after: float = 0.0) -> list[int]:
    """Steps of `stage` in metrics.jsonl, in file order; only those logged after `after` (epoch seconds) when given."""
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    # The pre-rollout filter's epoch-end records share a step number with that step's record.
    return [r["step"] for r in records if r["stage"] == stage and r["time"] > after and not any(k.startswith("filter/") for k in r)]


def _no_record_twice(run_dir: Path) -> None:
    seen = [(r["stage"], r["step"], tuple(sorted(r))) for r in map(json.loads, (run_dir / "metrics.jsonl").read_text().splitlines())]
    assert len(seen) == len(set(seen)), "a (stage, step) record appears twice in metrics.jsonl"


def _wandb_ids(run_dir: Path) -> set[str]:
    return {p.name.rsplit("-", 1)[1] for p in (run_dir / "wandb").glob("offline-run-*")}


def test_a_two_run_sweep_and_a_failing_run_are_submitted_as_arrays_and_results_shows_all(
    slurm_cluster: Path, caches: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    sweep_file = tmp_path / "pair.yaml"
    sweep_file.write_text(yaml.safe_dump({
        "name": "pair", "experiment": "embedded_smoke", "overrides": [*TOY[1:], *SLURM, *caches, "logger.mode=offline"],
        "grid": {"estimator": ["grpo", "slca_grpo"]}, "seed_keys": [],
    }))
    broken_file = tmp_path / "broken.yaml"
    missing = tmp_path / "no-such-sft.parquet"
    broken_file.write_text(yaml.safe_dump({
        "name": "broken", "experiment": "embedded_demo", "overrides": [*SLURM, "logger=none", "run.stages=[data]", "data=toucan",
                                                                      f"data.sft_path={missing}", f"data.rl_path={missing}", f"data.eval_path={missing}"],
        "grid": {"run.seed": [0]},
    }))
    # Both sweeps queue before either is waited for: the node runs two jobs at once.
    result = run_cli(["sweep", str(broken_file), "--dir", str(tmp_path / "broken")], capsys)
    assert result.code == 0, result.err
    result = run_cli(["sweep", str(sweep_file), "--dir", str(tmp_path / "pair"), "--wait"], capsys)
    assert result.code == 0, result.err + result.out

    manifest = json.loads((tmp_path / "pair" / "manifest.json").read_text())
    runs = manifest["runs"]
    assert sorted(runs) == ["estimator-grpo", "estimator-slca_grpo"]
    assert sorted(r["array_index"] for r in runs.values()) == [0, 1]
    assert len({r["job_id"].split("_")[0] for r in runs.values()}) == 1, "one array job for the sweep"
    for entry in runs.values():
        run_dir = Path(entry["run_dir"])
        spec = yaml.safe_load((run_dir / "spec.yaml").read_text())
        assert spec["logger"]["group"] == "pair"
        assert json.loads((run_dir / "provenance.json").read_text())["history"]
        assert Path(entry["log"]).is_file()

    result = run_cli(["results", str(tmp_path / "pair"), "--metric", "eval/rl/*"], capsys)
    assert result.code == 0, result.err
    assert "grpo" in result.out and "slca_grpo" in result.out and "runs without results" not in result.out
    with open(tmp_path / "pair" / "results.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["estimator"] for r in rows} == {"grpo", "slca_grpo"} and all(r["n"] == "1" for r in rows)
    finals = {}
    for entry in runs.values():
        for line in (Path(entry["run_dir"]) / "metrics.jsonl").read_text().splitlines():
            record = json.loads(line)
            if record["stage"] == "summary":
                finals[entry["point"]["estimator"]] = record
    for row in rows:
        assert math.isclose(float(row["mean"]), finals[row["estimator"]][row["metric"]], abs_tol=1e-6)

    wait_until(lambda: run_cli(["results", str(tmp_path / "broken")], capsys).out.count("failed") >= 1, "the broken run to fail", 600, 2)
    result = run_cli(["results", str(tmp_path / "broken")], capsys)
    (entry,) = json.loads((tmp_path / "broken" / "manifest.json").read_text())["runs"].values()
    table = (tmp_path / "broken" / "results.md").read_text()
    assert "| run.seed-0 | failed |" in table
    assert "data.sft_path: file not found" in table and str(missing) in table
    assert entry["log"] in table and Path(entry["log"]).is_file()
    assert "data.sft_path: file not found" in Path(entry["log"]).read_text(), "the error line is in the job's log too"
    assert job_field(entry["job_id"], "JobState") == "FAILED"


def test_a_job_requeued_mid_run_and_then_stopped_by_its_time_limit_resumes_from_its_checkpoint_without_duplicated_steps(
    slurm_cluster: Path, caches: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One long RL job, interrupted twice: `scontrol requeue` once its first checkpoint exists, then its
    time limit (cut mid-run so the limit's signal is due within a minute). It never ends by itself
    (a step budget far out of reach): once it has resumed twice and trained on, it is cancelled."""
    monkeypatch.chdir(tmp_path)
    run_dir = tmp_path / "long"
    result = run_cli(["run", *TOY, *SLURM, *caches, "launcher.signal_delay_s=590", "logger.mode=offline", f"run.dir={run_dir}",
                      "train.rl.max_steps=100000", "train.rl.epochs=10000", "train.rl.save_every_steps=2"], capsys)
    assert result.code == 0, result.err
    job = result.out.split(" as job ")[1].split()[0]
    checkpoints = run_dir / "rl" / "checkpoints"

    def newest_checkpoint() -> int:
        state = job_field(job, "JobState")
        assert state not in ("FAILED", "CANCELLED", "COMPLETED", "TIMEOUT"), f"job {job} ended: {state}: {(run_dir / 'job.json').read_text()}"
        return max((int(p.name.split("_")[1]) for p in checkpoints.glob("step_*")), default=0)

    def restart(count: int) -> float:
        """Once the job is pending after its `count`-th requeue, start it now (SLURM delays requeued jobs); when."""
        wait_until(lambda: job_field(job, "Restarts") == str(count) and job_field(job, "JobState") == "PENDING", f"requeue {count}")
        scontrol("update", f"JobId={job}", "StartTime=now")
        return time.time()

    try:
        # 1. Requeued by hand once the first RL checkpoint exists.
        wait_until(newest_checkpoint, "the first RL checkpoint")
        scontrol("requeue", job)
        restarted = restart(1)
        # 2. Once it trained on from its checkpoint, its limit is cut: the signal is due within a minute, and
        #    submitit checkpoints and requeues the job.
        resumed_from = newest_checkpoint()
        wait_until(lambda: newest_checkpoint() > resumed_from and job_field(job, "JobState") == "RUNNING", "a checkpoint after the requeue")
        elapsed = _seconds(job_field(job, "RunTime"))
        scontrol("update", f"JobId={job}", f"TimeLimit={math.ceil((elapsed + 591) / 60)}")
        restarted = restart(2)
        scontrol("update", f"JobId={job}", "TimeLimit=60")
        resumed_from = newest_checkpoint()
        wait_until(lambda: any(s > resumed_from for s in _metric_steps(run_dir, "rl", after=restarted)), "a step after the second resume")
    finally:
        subprocess.run(["scancel", job], check=False, timeout=60)
    wait_until(lambda: job_field(job, "JobState") in ("CANCELLED", ""), "the cancelled job to end")

    record = json.loads((run_dir / "job.json").read_text())
    assert record["attempt"] == 3, record
    submitit_log = Path(record["log"].replace("_log.err", "_log.out")).read_text()  # submitit logs to the job's stdout
    # submitit calls it "preempted" (it compares the run time with the limit asked at submission); either way it requeues.
    # Its "Requeued job" line is not asked for: it is written once `scontrol requeue` returns, and SLURM's SIGTERM for
    # that requeue may reach the job first (slca's handler then ends the attempt, already requeued: the restart count).
    assert "Caught signal SIGUSR2" in submitit_log, f"the second stop came from the time-limit signal:\n{submitit_log}"
    rl = _metric_steps(run_dir, "rl")
    assert rl == list(range(1, len(rl) + 1)), "every RL step logged once, in order"
    # Resumed, not restarted: the steps up to the checkpoint keep the lines logged before the restart.
    assert _metric_steps(run_dir, "rl", after=restarted)[0] == resumed_from + 1
    _no_record_twice(run_dir)
    sft = _metric_steps(run_dir, "sft")
    assert sft == list(range(1, len(sft) + 1)) and sft
    runs = list((run_dir / "wandb").glob("offline-run-*"))
    assert len(runs) == 3 and len(_wandb_ids(run_dir)) == 1, "one W&B run id over three attempts"


def _seconds(runtime: str) -> int:
    """SLURM's [D-]HH:MM:SS as seconds."""
    days, _, clock = runtime.rpartition("-")
    h, m, s = (int(x) for x in clock.split(":"))
    return int(days or 0) * 86400 + h * 3600 + m * 60 + s
