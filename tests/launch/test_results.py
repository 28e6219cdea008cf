"""`slca results` on a sweep directory laid out by hand: grouping, mean ± std, and unfinished runs."""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

import pytest
import yaml

from slca.runlock import RunLock
from tests.badinput import run_cli

SCORES = {("grpo", 0): 0.25, ("grpo", 1): 0.5, ("grpo", 2): 0.125, ("slca_grpo", 0): 0.75, ("slca_grpo", 1): 0.5, ("slca_grpo", 2): 1.0}


def _run(sweep: Path, key: str, point: dict, *, stages_done: bool, metrics: dict | None = None, job: dict | None = None) -> dict:
    run_dir = sweep / "runs" / key
    run_dir.mkdir(parents=True)
    (run_dir / "spec.yaml").write_text(yaml.safe_dump({"run": {"stages": ["data", "eval"]}}))
    for stage in ("data", "eval") if stages_done else ("data",):
        (run_dir / stage).mkdir()
        (run_dir / stage / "result.json").write_text("{}")
    lines = [json.dumps({"stage": "rl", "step": 1, "time": 1.0, "eval/rl/success": 99.0})]  # not a summary: ignored
    if metrics:
        lines.append(json.dumps({"stage": "summary", "step": -1, "time": 2.0, **metrics}))
    lines.append('{"stage": "summary", "step": -1, "time"')  # a torn last line
    (run_dir / "metrics.jsonl").write_text("\n".join(lines))
    if job:
        (run_dir / "job.json").write_text(json.dumps(job))
    return {"point": point, "run_dir": str(run_dir), "job_id": f"local:{len(key)}", "array_index": None, "log": str(sweep / "logs" / f"{key}.log")}


@pytest.fixture
def sweep_dir(tmp_path: Path) -> Path:
    sweep = tmp_path / "sweep"
    (sweep / "logs").mkdir(parents=True)
    runs = {}
    for (estimator, seed), score in SCORES.items():
        key = f"estimator-{estimator}_run.seed-{seed}"
        runs[key] = _run(sweep, key, {"estimator": estimator, "run.seed": seed}, stages_done=True,
                         metrics={"eval/rl/success": score, "eval/rl/rows": 16, "eval/rl/name_f1": score / 2})
    log = sweep / "logs" / "estimator-rloo_run.seed-0.log"
    log.write_text("loading\nslca: data.sft_path: file not found: /x.parquet\n")
    runs["estimator-rloo_run.seed-0"] = _run(sweep, "estimator-rloo_run.seed-0", {"estimator": "rloo", "run.seed": 0}, stages_done=False,
                                             job={"state": "failed", "rc": 4, "error": "slca: data.sft_path: file not found: /x.parquet", "log": str(log)})
    killed_log = sweep / "logs" / "estimator-rloo_run.seed-1.log"
    killed_log.write_text("[rl] running\nKilled\n")
    runs["estimator-rloo_run.seed-1"] = _run(sweep, "estimator-rloo_run.seed-1", {"estimator": "rloo", "run.seed": 1}, stages_done=False,
                                             job={"state": "running", "log": str(killed_log)})
    runs["estimator-rloo_run.seed-2"] = _run(sweep, "estimator-rloo_run.seed-2", {"estimator": "rloo", "run.seed": 2}, stages_done=False)
    runs["estimator-dr_grpo_run.seed-0"] = {"point": {"estimator": "dr_grpo", "run.seed": 0}, "run_dir": str(sweep / "runs" / "never"),
                                            "job_id": None, "array_index": None, "log": None}
    (sweep / "manifest.json").write_text(json.dumps({"name": "t", "launcher": "local", "runs": runs}))
    (sweep / "sweep.json").write_text(json.dumps({"name": "t", "grid": {"estimator": [], "run.seed": []}, "seed_keys": ["run.seed"]}))
    return sweep


def test_results_average_each_estimator_over_its_seeds_and_list_every_run_without_results_with_its_error_and_log(
    sweep_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "40")  # a narrow terminal: a run without results is still one whole line
    running = sweep_dir / "runs" / "estimator-rloo_run.seed-2"
    with RunLock(running):  # a local run holds its directory's lock while it goes
        result = run_cli(["results", str(sweep_dir)], capsys)
    assert result.code == 0, result.err
    with open(sweep_dir / "results.csv") as handle:
        rows = {(r["estimator"], r["metric"]): r for r in csv.DictReader(handle)}
    assert set(rows) == {(e, m) for e in ("grpo", "slca_grpo") for m in ("eval/rl/success", "eval/rl/name_f1")}, "counts (*/rows) left out"
    for estimator in ("grpo", "slca_grpo"):
        scores = [SCORES[(estimator, s)] for s in range(3)]
        row = rows[(estimator, "eval/rl/success")]
        assert float(row["mean"]) == pytest.approx(statistics.mean(scores))
        assert float(row["std"]) == pytest.approx(statistics.stdev(scores), rel=1e-5)
        assert row["n"] == "3"
    table = (sweep_dir / "results.md").read_text()
    assert f"| grpo | eval/rl/success | {statistics.mean([0.25, 0.5, 0.125]):.4f} ± {statistics.stdev([0.25, 0.5, 0.125]):.4f} | 3 |" in table
    failed_log = sweep_dir / "logs" / "estimator-rloo_run.seed-0.log"
    assert f"| estimator-rloo_run.seed-0 | failed | slca: data.sft_path: file not found: /x.parquet | {failed_log} |" in table
    assert "| estimator-rloo_run.seed-1 | stale | the job ended without a record of how (killed?); log ends: Killed |" in table
    assert "| estimator-rloo_run.seed-2 | running |" in table
    assert "| estimator-dr_grpo_run.seed-0 | missing | never prepared (no spec.yaml) |" in table
    assert f"  estimator-rloo_run.seed-0 failed: slca: data.sft_path: file not found: /x.parquet (log {failed_log})\n" in result.out
    for key in ("estimator-rloo_run.seed-1 stale", "estimator-rloo_run.seed-2 running", "estimator-dr_grpo_run.seed-0 missing: never prepared"):
        assert key in result.out
    assert not [p for p in sweep_dir.iterdir() if p.name.startswith(".")], "no temporary left beside the outputs"


def test_results_restricted_by_a_metric_pattern_and_run_again_once_the_run_has_ended_shows_it_failed(
    sweep_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_cli(["results", str(sweep_dir), "--metric", "*/name_f1"], capsys)
    assert result.code == 0, result.err
    metrics = {r["metric"] for r in csv.DictReader(open(sweep_dir / "results.csv"))}
    assert metrics == {"eval/rl/name_f1"}
    assert "| estimator-rloo_run.seed-2 | failed | never submitted |" not in (sweep_dir / "results.md").read_text()
    assert "| estimator-rloo_run.seed-2 | stale | the job never started the run (no log) |" in (sweep_dir / "results.md").read_text()
