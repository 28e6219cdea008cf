"""`slca status`, `slca runs` and run lookup on run directories laid out by hand (launcher=local:
liveness is the run lock, held here by this process)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from slca.runlock import RunLock
from tests.badinput import assert_refused, run_cli

STARTED, ENDED = "2026-01-01T00:00:00+00:00", "2026-01-01T01:02:03+00:00"  # 3723 s apart


def _run_dir(run_dir: Path, *, done: bool, lines: list[dict] | None = None, job: dict | None = None, experiment: str = "embedded_demo") -> Path:
    run_dir.mkdir(parents=True)
    (run_dir / "spec.yaml").write_text(yaml.safe_dump({"experiment": experiment, "launcher": {"name": "local"}, "run": {"stages": ["data", "rl"]}},
                                                      sort_keys=False))
    for stage in ("data", "rl") if done else ("data",):
        (run_dir / stage).mkdir()
        (run_dir / stage / "result.json").write_text("{}")
    if lines:
        (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines) + '{"stage": "rl", "st')  # a torn last line
    if job:
        (run_dir / "job.json").write_text(json.dumps(job))
    (run_dir / "provenance.json").write_text(json.dumps({"created_utc": "2026-01-01T00:00:00+00:00",
                                                         "history": [{"argv": ["slca", "run", f"experiment={experiment}", "estimator=rloo"]}]}))
    return run_dir


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    sweep_dir = tmp_path / "runs" / "sweeps" / "cmp"
    runs = sweep_dir / "runs"
    (sweep_dir / "logs").mkdir(parents=True)
    log = sweep_dir / "logs" / "a.log"
    log.write_text("[rl] step 6\nKilled\n")
    _run_dir(runs / "estimator-grpo", done=True,
             lines=[{"stage": "rl", "step": 9, "time": 1.0, "reward/score_mean": 0.5}, {"stage": "summary", "step": -1, "time": 2.0, "eval/rl/rows": 4, "eval/rl/success": 0.75}],
             job={"state": "done", "job_id": "local:11", "log": str(log), "started": STARTED, "ended": ENDED, "attempt": 1, "job_attempt": 1})
    _run_dir(runs / "estimator-slca_grpo", done=False, lines=[{"stage": "rl", "step": 7, "time": 1.0, "rollout/rows_in": 2.0, "reward/score_mean": 0.25}],
             job={"state": "running", "job_id": "local:12", "log": str(log), "started": STARTED, "attempt": 3, "job_attempt": 3})
    _run_dir(runs / "estimator-rloo", done=False, lines=[{"stage": "sft", "step": 3, "time": 1.0, "loss": 1.5, "lr": 0.1}],
             job={"state": "running", "job_id": "local:13", "log": str(log), "started": STARTED, "attempt": 1})
    _run_dir(runs / "estimator-dr_grpo", done=False,
             job={"state": "failed", "job_id": "local:14", "rc": 4, "error": "slca: data.sft_path: file not found: /x", "log": str(log), "started": STARTED,
                  "ended": ENDED})
    _run_dir(runs / "estimator-toolpo", done=False,
             job={"state": "cancelled", "job_id": "local:15", "cancelled_job": "local:15", "cancelled": ENDED, "started": STARTED, "log": str(log)})
    entries = {key: {"point": {"estimator": key.split("-", 1)[1]}, "run_dir": str(runs / key), "job_id": f"local:{n}", "array_index": None, "log": str(log)}
               for n, key in enumerate(["estimator-grpo", "estimator-slca_grpo", "estimator-rloo", "estimator-dr_grpo", "estimator-toolpo"], 11)}
    entries["estimator-slca_grpo"]["job_id"] = None  # a local sweep records job ids once its runs have ended
    entries["estimator-never"] = {"point": {"estimator": "never"}, "run_dir": str(runs / "estimator-never"), "job_id": None, "array_index": None, "log": None}
    (sweep_dir / "manifest.json").write_text(json.dumps({"name": "cmp", "launcher": "local", "runs": entries}))
    return sweep_dir


def test_status_reads_every_state_stage_step_and_headline_metric_from_the_run_directories_and_the_run_locks(
    sweep: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    with RunLock(sweep / "runs" / "estimator-slca_grpo"):
        result = run_cli(["status", str(sweep), "--json"], capsys)
    assert result.code == 0, result.err
    views = {v["run"]: v for v in json.loads(result.out)}
    assert {k: v["state"] for k, v in views.items()} == {
        "estimator-grpo": "finished", "estimator-slca_grpo": "running", "estimator-rloo": "stale", "estimator-dr_grpo": "failed",
        "estimator-toolpo": "cancelled", "estimator-never": "missing"}
    finished, running, stale = views["estimator-grpo"], views["estimator-slca_grpo"], views["estimator-rloo"]
    assert (finished["stage"], finished["metric"], finished["value"], finished["wall_s"]) == ("summary", "eval/rl/success", 0.75, 3723.0)
    assert (running["stage"], running["step"], running["metric"], running["value"]) == ("rl", 7, "reward/score_mean", 0.25)
    assert running["requeues"] == 2 and running["job_id"] == "local:12", "two requeues: its job's third attempt"
    assert (stale["stage"], stale["step"], stale["metric"], stale["value"]) == ("sft", 3, "loss", 1.5)
    assert stale["detail"] == "the job ended without a record of how (killed?); log ends: Killed"
    assert views["estimator-dr_grpo"]["detail"] == "slca: data.sft_path: file not found: /x"
    assert views["estimator-toolpo"]["detail"] == f"cancelled at {ENDED}"
    assert finished["overrides"] == ["estimator=grpo"] and finished["experiment"] == "embedded_demo" and finished["sweep"] == "cmp"

    result = run_cli(["status", str(sweep)], capsys)  # the lock is gone: that run's job is no longer alive
    assert result.code == 0, result.err
    assert result.out.splitlines()[0] == f"{sweep}: 6 run(s): 1 cancelled, 1 failed, 1 finished, 1 missing, 2 stale"
    assert "stale estimator-rloo: the job ended without a record of how (killed?); log ends: Killed" in result.out
    assert "stale estimator-slca_grpo: the job ended without a record of how (killed?)" in result.out
    assert "1h02m" in result.out and "eval/rl/success=0.75" in result.out


def test_status_at_80_columns_keeps_each_line_within_the_terminal_and_names_the_columns_it_left_out(
    sweep: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    result = run_cli(["status", str(sweep)], capsys)
    table = result.out.split("\n(left out to fit 80 columns: ")[0].splitlines()[1:]
    assert all(len(line) <= 80 for line in table), max(table, key=len)
    assert "(left out to fit 80 columns: log, wall, launcher" in result.out and "--json has every field" in result.out
    monkeypatch.setenv("COLUMNS", "250")
    wide = run_cli(["status", str(sweep)], capsys).out
    assert "left out" not in wide and str(sweep / "logs" / "a.log") in wide


def test_a_run_is_found_by_a_unique_prefix_of_its_id_and_an_ambiguous_or_unknown_one_is_refused_naming_the_matches(
    sweep: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = sweep.parents[1]
    monkeypatch.chdir(root.parent)
    monkeypatch.setenv("COLUMNS", "200")
    _run_dir(root / "embedded_demo" / "20260101T000000Z", done=True, lines=[{"stage": "summary", "step": -1, "time": 1.0, "eval/rl/success": 0.5}])
    _run_dir(root / "embedded_demo" / "20260102T000000Z", done=False, experiment="embedded_demo")
    result = run_cli(["status", "20260101", "--json"], capsys)
    assert result.code == 0, result.err
    (view,) = json.loads(result.out)
    assert view["run_dir"] == "runs/embedded_demo/20260101T000000Z" and view["state"] == "finished" and view["overrides"] == ["estimator=rloo"]
    (view,) = json.loads(run_cli(["status", "sweeps/cmp/runs/estimator-toolpo", "--json"], capsys).out)
    assert view["state"] == "cancelled" and view["sweep"] == "cmp", "a run inside a sweep is read through its sweep's manifest"
    assert len(json.loads(run_cli(["status", "cm", "--json"], capsys).out)) == 6, "a prefix of a sweep's name names the sweep"
    assert_refused(run_cli(["status", "2026"], capsys), "2026", "2 directories", "embedded_demo/20260101T000000Z", "embedded_demo/20260102T000000Z")
    assert_refused(run_cli(["logs", "nope"], capsys), "nope", "no run or sweep")
    (sweep / "sweep.json").write_text(json.dumps({"name": "cmp", "grid": {"estimator": []}, "seed_keys": []}))
    assert run_cli(["results", "cm"], capsys).code == 0 and (sweep / "results.md").is_file(), "slca results takes the prefix too"
    assert_refused(run_cli(["results", "2026"], capsys), "2 directories")

    result = run_cli(["runs"], capsys)
    assert result.code == 0, result.err
    lines = {line.split()[0]: line for line in result.out.splitlines()[1:]}
    assert len(lines) == 8 and "eval/rl/success=0.5" in lines["embedded_demo/20260101T000000Z"]
    assert lines["embedded_demo/20260102T000000Z"].split()[1:4] == ["embedded_demo", "2026-01-01T00:00:00Z", "stale"]
    assert "sweeps/cmp/runs/estimator-grpo" in lines


def test_logs_shows_one_attempt_of_a_requeued_job_and_the_latest_resubmission_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "job7.log", tmp_path / "job9.log"
    first.write_text("attempt one\nrequeued\nattempt two\n")
    second.write_text("resubmitted\n")
    run_dir = _run_dir(tmp_path / "run", done=False, job={"state": "running", "job_id": "9", "log": str(second), "attempts": [
        {"attempt": 1, "job_id": "7", "log": str(first), "offset": 0}, {"attempt": 2, "job_id": "7", "log": str(first), "offset": 21},
        {"attempt": 3, "job_id": "9", "log": str(second), "offset": 0}]})
    assert run_cli(["logs", run_dir, "--attempt", "1"], capsys).out == "attempt one\nrequeued\n"
    assert run_cli(["logs", run_dir, "--attempt", "2"], capsys).out == "attempt two\n"
    assert run_cli(["logs", run_dir], capsys).out == "resubmitted\n"
    assert_refused(run_cli(["logs", run_dir, "--attempt", "4"], capsys), "no attempt 4", "attempts: 1, 2, 3")


# A job's process: holds its run's lock and appends to its log, as `python -m slca.launch.job RUN_DIR LOG` does.
JOB = """
import sys, time
from slca.runlock import RunLock
run_dir, log, lines, pause = sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
with RunLock(run_dir, note=lambda _: None):
    for i in range(lines):
        with open(log, "a") as handle:
            handle.write(f"line {i}\\n")
        time.sleep(pause)
"""


def _job(run_dir: Path, log: Path, lines: int, pause: float) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", JOB, "slca.launch.job", str(run_dir), str(log), str(lines), str(pause)])
    deadline = time.monotonic() + 30
    while not (log.exists() and "line 0" in log.read_text()):
        assert proc.poll() is None and time.monotonic() < deadline, "the job process did not start writing"
        time.sleep(0.05)
    return proc


def test_logs_follow_prints_what_the_running_job_appends_and_returns_once_the_job_has_ended(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "job.log"
    run_dir = _run_dir(tmp_path / "run", done=False, job={"state": "running", "job_id": "local:1", "log": str(log),
                                                          "attempts": [{"attempt": 1, "job_id": "local:1", "log": str(log), "offset": 0}]})
    job = _job(run_dir, log, 12, 0.1)
    result = run_cli(["logs", run_dir, "-f"], capsys)
    assert job.poll() is not None, "logs -f returned while the job was still running"
    assert result.code == 0 and result.out == "".join(f"line {i}\n" for i in range(12))


def test_cancel_sends_a_running_local_job_sigterm_marks_a_queued_run_and_leaves_ended_runs_as_they_are(
    sweep: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    running = sweep / "runs" / "estimator-slca_grpo"
    job = _job(running, sweep / "logs" / "a.log", 600, 0.1)
    try:
        record = json.loads((running / "job.json").read_text())
        (running / "job.json").write_text(json.dumps({**record, "job_id": f"local:{job.pid}"}))
        manifest = json.loads((sweep / "manifest.json").read_text())
        _run_dir(sweep / "runs" / "estimator-queued", done=False)  # prepared, waiting its turn in the sweep's process
        manifest["runs"]["estimator-queued"] = {"point": {"estimator": "q"}, "run_dir": str(sweep / "runs" / "estimator-queued"), "job_id": None, "log": None}
        (sweep / "manifest.json").write_text(json.dumps(manifest))
        result = run_cli(["cancel", sweep], capsys)
        assert result.code == 0, result.err
        assert job.wait(timeout=30) == -signal.SIGTERM
    finally:
        if job.poll() is None:
            os.kill(job.pid, signal.SIGKILL)
    lines = result.out.splitlines()
    assert f"slca cancel: estimator-slca_grpo: cancelled (SIGTERM to process {job.pid})" in lines
    assert "slca cancel: estimator-queued: cancelled (marked before it started (a running local sweep skips it))" in lines
    assert {"slca cancel: estimator-grpo: left (finished)", "slca cancel: estimator-rloo: left (stale)", "slca cancel: estimator-dr_grpo: left (failed)",
            "slca cancel: estimator-toolpo: left (cancelled)", "slca cancel: estimator-never: left (missing)"} <= set(lines)
    views = {v["run"]: v for v in json.loads(run_cli(["status", sweep, "--json"], capsys).out)}
    assert views["estimator-slca_grpo"]["state"] == views["estimator-queued"]["state"] == "cancelled"
    record = json.loads((running / "job.json").read_text())
    assert record["cancelled_job"] == f"local:{job.pid}" and record["attempt"] == 3, "the record keeps its attempts"


# `squeue -h -r -O ArrayJobID:30,ArrayTaskID:30,JobID:30,State:30,RestartCnt:30` in the shape Slurm 22.05 printed on
# the test cluster: a plain job, then the three tasks of array job 1 (the last one here running after two requeues).
SQUEUE = "".join(f"{a:<30}{t:<30}{j:<30}{s:<30}{r:<30}\n" for a, t, j, s, r in [
    ("2", "N/A", "2", "PENDING", "0"), ("1", "0", "1", "PENDING", "0"), ("1", "1", "1", "PENDING", "0"), ("1", "2", "1", "RUNNING", "2")])


def test_squeue_lines_give_array_tasks_their_own_ids_and_the_restart_count() -> None:
    from slca.launch.base import LiveJob
    from slca.launch.slurm import parse_squeue

    assert parse_squeue(SQUEUE + "garbage line\n") == {"2": LiveJob("pending", 0), "1_0": LiveJob("pending", 0), "1_1": LiveJob("pending", 0),
                                                     "1_2": LiveJob("running", 2)}


def test_status_when_squeue_cannot_be_asked_shows_those_runs_unknown_with_the_reason_and_still_shows_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "runs"
    slurm = root / "sweeps" / "far"
    _run_dir(slurm / "runs" / "a", done=False, job={"state": "running", "job_id": "17", "log": ""})
    _run_dir(slurm / "runs" / "b", done=True)
    entries = {k: {"point": {"k": k}, "run_dir": str(slurm / "runs" / k), "job_id": j, "log": None} for k, j in (("a", "17"), ("b", "18"))}
    (slurm / "manifest.json").write_text(json.dumps({"name": "far", "launcher": "slurm", "runs": entries}))
    _run_dir(root / "embedded_demo" / "20260101T000000Z", done=True)
    # squeue exits non-zero at once on a configuration it cannot read (a missing file would send it looking
    # for a controller through DNS instead, which takes a minute to fail offline)
    (tmp_path / "empty-slurm.conf").write_text("")
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "empty-slurm.conf"))
    result = run_cli(["status", "--all", "--root", root, "--json"], capsys)
    assert result.code == 0, result.err
    states = {v["run"]: (v["state"], v["detail"]) for v in json.loads(result.out)}
    assert states["a"] == ("unknown", "launcher=slurm: squeue failed, so job states are unknown (CalledProcessError)")
    assert states["b"][0] == "finished" and states["20260101T000000Z"][0] == "finished"


def _evaluated_run(run_dir: Path, label: str, success: float) -> Path:
    """A run directory with a real spec.yaml (embedded_smoke) and an evaluation record of one model."""
    from slca.config.compose import compose_spec
    from slca.config.io import dump_spec

    run_dir.mkdir(parents=True)
    (run_dir / "spec.yaml").write_text(dump_spec(compose_spec(["experiment=embedded_smoke", "logger=none"])))
    (run_dir / "eval").mkdir()
    card = {"model": {"label": label, "path": f"/m/{label}"}, "scoring": {"benchmark": "toucan", "reward": "hierr"},
            "data": {"sha256": "a" * 64, "rows_evaluated": 10, "versions": {}}}
    record = {"card": card, "headline": ["success"], "cells": [{"metrics": {"success": {"mean": success, "std": None, "n": 1}}}]}
    (run_dir / "eval" / "results.json").write_text(json.dumps({"results": [record]}))
    return run_dir


def test_eval_from_and_compare_and_the_eval_from_run_field_take_a_unique_prefix_of_a_runs_id_through_the_one_lookup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from slca.launch.grid import SweepFile
    from slca.launch.sweep import plan_runs

    monkeypatch.chdir(tmp_path)
    base = _evaluated_run(Path("runs/embedded_smoke/20260101T000000Z"), "backbone", 0.25)
    trained = _evaluated_run(Path("runs/embedded_smoke/20260102T000000Z"), "rl", 0.75)
    (Path("runs/sweeps/20260103/manifest.json").parent).mkdir(parents=True)
    Path("runs/sweeps/20260103/manifest.json").write_text("{}")  # a sweep: never a match where a run is asked for

    result = run_cli(["eval", "--compare", "20260101", "embedded_smoke/20260102T@rl"], capsys)
    assert result.code == 0, result.err
    assert "| success | 0.2500 | 0.7500 | +0.5000 |" in result.out
    assert f"{base}/eval/results.json" in result.out and f"{trained}/eval/results.json" in result.out
    assert_refused(run_cli(["eval", "--compare", "2026", "20260102"], capsys),
                   "2026: 2 directories under runs/ match (embedded_smoke/20260101T000000Z, embedded_smoke/20260102T000000Z)")
    assert_refused(run_cli(["eval", "--compare", "nope", "20260102"], capsys), "nope: no such directory, and no run under runs/")

    spec = yaml.safe_load(run_cli(["eval", "--cfg", "job", "--from", "20260102"], capsys).out)
    assert spec["eval"]["from_run"] == str(trained), "--from takes the prefix; the spec records the directory"
    spec = yaml.safe_load(run_cli(["eval", "--cfg", "job", "eval.from_run=embedded_smoke/20260101"], capsys).out)
    assert spec["eval"]["from_run"] == str(base)
    spec = yaml.safe_load(run_cli(["run", "--cfg", "job", "experiment=embedded_smoke", "run.stages=[data,eval]", "eval.from_run=embedded_smoke/20260102"], capsys).out)
    assert spec["eval"]["from_run"] == str(trained), "slca run resolves the field before the spec is saved"
    assert_refused(run_cli(["run", "--cfg", "job", "experiment=embedded_smoke", "run.stages=[data,eval]", "eval.from_run=embedded_smoke/2026"], capsys),
                   "eval.from_run=embedded_smoke/2026: 2 directories under runs/ match")
    assert_refused(run_cli(["eval", "--cfg", "job", "--from", "nope"], capsys), "nope: no such directory, and no run under runs/")

    sweep = SweepFile(name="s", experiment="embedded_smoke", overrides=["run.stages=[data,eval]", "eval.from_run=embedded_smoke/20260101"],
                      grid={"eval.seeds": [[0], [1]]})
    assert [plan.spec.eval.from_run for plan in plan_runs(sweep, [], Path("runs/sweeps/s"))] == [str(base)] * 2
    assert not Path("runs/sweeps/s").exists()
