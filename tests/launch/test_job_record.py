"""A launched run stopped by SIGTERM (SLURM's requeue, preemption, time limit or scancel) exits 143
and leaves its job record `running`, as a job killed outright does: the run is not over, and the
requeued attempt writes the next record (docs/launch.md#run-records). A real job process, a real signal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.badinput import run_cli
from tests.signalling import signal_when


def test_a_job_sent_sigterm_exits_143_and_its_record_still_says_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir, cache = tmp_path / "run", tmp_path / "cache"
    # The data stage synthesises 20,000 SFT rows: seconds of work, so the signal lands mid-run.
    spec = run_cli(["run", "experiment=embedded_smoke", "run.stages=[data]", "logger=none", "data.n_sft=20000",
                    f"run.dir={run_dir}", f"data.cache_dir={cache}", "--cfg", "job"], capsys)
    assert spec.code == 0, spec.err
    run_dir.mkdir()
    (run_dir / "spec.yaml").write_text(spec.out)
    log = tmp_path / "job.log"
    proc = subprocess.Popen([sys.executable, "-m", "slca.launch.job", str(run_dir), str(log), "4242"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = signal_when(proc, lambda: any(p.name.endswith(".tmp") for p in cache.iterdir()), "the job's data stage")
    assert proc.returncode == 143, err
    assert err.splitlines()[-1] == "slca: terminated"
    record = json.loads((run_dir / "job.json").read_text())
    assert record["state"] == "running" and record["attempt"] == 1 and record["job_id"] == "4242"
    assert "rc" not in record and "ended" not in record


def test_a_job_whose_run_is_refused_records_the_line_slca_printed_as_its_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from slca.launch.job import run_job

    run_dir, missing = tmp_path / "run", tmp_path / "absent-sft.parquet"
    spec = run_cli(["run", "run.stages=[data]", "logger=none", "data=toucan", f"data.sft_path={missing}",
                    f"data.rl_path={missing}", f"data.eval_path={missing}", f"run.dir={run_dir}", "--cfg", "job"], capsys)
    assert spec.code == 0, spec.err
    run_dir.mkdir()
    (run_dir / "spec.yaml").write_text(spec.out)
    outcome = run_job(run_dir, job_id="7", log=str(tmp_path / "job.log"))
    printed = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert outcome.code != 0 and outcome.error == printed[-1] and str(missing) in outcome.error
    record = json.loads((run_dir / "job.json").read_text())
    assert (record["state"], record["rc"], record["error"], record["job_id"]) == ("failed", outcome.code, outcome.error, "7")


def test_each_attempt_is_listed_with_its_log_offset_and_a_requeue_is_counted_apart_from_a_resubmission(tmp_path: Path) -> None:
    from slca.launch.job import run_job

    run_dir, log, other = tmp_path / "run", tmp_path / "7.log", tmp_path / "9.log"
    run_dir.mkdir()
    (run_dir / "spec.yaml").write_text("experiment: [not, a, name]\n")  # refused at once: each attempt ends in a second
    log.write_text("0123456789")
    run_job(run_dir, job_id="7", log=str(log))
    with open(log, "a") as handle:
        handle.write("abc")
    run_job(run_dir, job_id="7", log=str(log))  # SLURM requeued job 7: same id, same log
    assert json.loads((run_dir / "job.json").read_text())["job_attempt"] == 2
    run_job(run_dir, job_id="9", log=str(other))  # `slca sweep` resubmitted the run: a new job
    record = json.loads((run_dir / "job.json").read_text())
    assert [(a["attempt"], a["job_id"], a["log"], a["offset"]) for a in record["attempts"]] == [
        (1, "7", str(log), 10), (2, "7", str(log), 13), (3, "9", str(other), 0)]
    assert (record["attempt"], record["job_attempt"], record["state"]) == (3, 1, "failed")
