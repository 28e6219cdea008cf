"""Real verl 0.9.1 steps on CPU through the CLI: `slca run experiment=verl_smoke` (local SFT warm-up,
then verl's own trainer with slca's CPU platform, transformers rollout, tool agent loop with the
schema simulator, reward and trainer)."""

from __future__ import annotations

import csv
import json
import math
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import yaml

from tests.badinput import run_cli
from tests.launch.cluster import job_field, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.verl]

SLCA = [sys.executable, "-m", "slca.cli", "run", "experiment=verl_smoke"]


def run_slca(run_dir: Path, *overrides: str) -> tuple[subprocess.CompletedProcess, float, float]:
    """(the finished CLI process, wall seconds, peak memory in GiB of it and every process under it,
    as proportional set size: pages shared between the Ray workers are counted once)."""
    start = time.perf_counter()
    proc = subprocess.Popen([*SLCA, f"run.dir={run_dir}", *overrides], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    root = psutil.Process(proc.pid)
    while proc.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
            peak = max(peak, sum(p.memory_full_info().pss for p in tree if p.is_running()))
        except psutil.Error:
            pass
        time.sleep(1.0)
    out, err = proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), time.perf_counter() - start, peak / 2**30


def rl_steps(run_dir: Path) -> list[dict]:
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("stage") == "rl"]


def verl_steps(run_dir: Path) -> list[int]:
    return [json.loads(line)["step"] for line in (run_dir / "rl" / "verl_metrics.jsonl").read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("verl") / "smoke"
    result, wall, peak = run_slca(run_dir)
    print(f"verl_smoke: wall {wall:.0f} s, peak PSS {peak:.2f} GiB")
    assert result.returncode == 0, (result.stderr[-3000:], (run_dir / "rl" / "verl.log").read_text()[-5000:] if (run_dir / "rl" / "verl.log").exists() else "")
    return run_dir


def assert_real_steps(steps: list[dict], expected: list[int]) -> None:
    assert [s["step"] for s in steps] == expected
    for s in steps:
        assert math.isfinite(s["actor/pg_loss"]) and math.isfinite(s["actor/grad_norm"])
        assert s["response_length/mean"] > 0
        assert -0.5 <= s["critic/score/mean"] <= 1.0  # HierR's range (a malformed call scores -0.5)
        # Rollout log-probs against the actor's: a broken weight sync shows up here (~1e-4 when synced).
        assert s["training/rollout_probs_diff_max"] < 1e-2
    assert max(s["actor/grad_norm"] for s in steps) > 0


def test_verl_smoke_runs_real_slca_grpo_steps_on_cpu_and_logs_verls_metrics(smoke):
    steps = rl_steps(smoke)
    assert_real_steps(steps, [1, 2])
    assert all("slca/zero_variance_group_frac" in s and "slca/adv_summary_abs_mean" in s for s in steps)
    # Tool calls made and answered: a rollout with a tool round has 2 assistant turns, 1 tool turn and the
    # prompt (verl's num_turns). Its tool-response tokens carry rollout log-prob 0 (probability 1); the
    # model gives them far less, so the small rollout_probs_diff_max above says they are out of the mask.
    assert max(s["num_turns/max"] for s in steps) >= 4
    assert (smoke / "rl" / "checkpoints" / "global_step_2" / "actor").is_dir()
    result = json.loads((smoke / "rl" / "result.json").read_text())
    assert "model_dir" in json.dumps(result)


def test_the_final_actor_is_a_hugging_face_model_the_local_backend_loads(smoke):
    from slca.backends.local.backbone import load_backbone

    model, tokenizer = load_backbone(smoke / "rl" / "model")
    ids = tokenizer("hello", return_tensors="pt").input_ids
    logits = model(input_ids=ids).logits
    assert logits.shape[-1] == model.config.vocab_size and bool(logits.isfinite().all())


def test_a_rerun_after_the_first_checkpoint_continues_from_it(smoke, tmp_path):
    run_dir = tmp_path / "resumed"
    shutil.copytree(smoke, run_dir, ignore=shutil.ignore_patterns("run.lock"))
    # As if the run had been killed after logging step 2 and before saving its checkpoint: verl's own
    # metrics file holds steps 1 and 2, the run's metrics.jsonl none of them yet (verl's steps are read in
    # when verl ends), and the newest checkpoint is step 1's.
    checkpoints = run_dir / "rl" / "checkpoints"
    shutil.rmtree(checkpoints / "global_step_2")
    (checkpoints / "latest_checkpointed_iteration.txt").write_text("1")
    for name in ("result.json", "summary.json"):
        (run_dir / "rl" / name).unlink()
    shutil.rmtree(run_dir / "rl" / "model")
    first_attempt = {s["step"]: s for s in rl_steps(smoke)}
    lines = (run_dir / "metrics.jsonl").read_text().splitlines(keepends=True)
    (run_dir / "metrics.jsonl").write_text("".join(line for line in lines if json.loads(line).get("stage") != "rl"))
    result, _, _ = run_slca(run_dir)
    assert result.returncode == 0, result.stderr[-3000:]
    assert verl_steps(run_dir) == [2]  # step 1 came from the checkpoint, only step 2 ran
    assert (checkpoints / "global_step_2" / "actor").is_dir() and (run_dir / "rl" / "model").is_dir()
    # The killed attempt's file was kept aside, and the run's record has each step once: step 1 as the killed
    # attempt logged it, step 2 as the resumed attempt ran it again.
    assert [json.loads(line)["step"] for line in (run_dir / "rl" / "verl_metrics.attempt-1.jsonl").read_text().splitlines()] == [1, 2]
    resumed = rl_steps(run_dir)
    assert [s["step"] for s in resumed] == [1, 2]
    same = ("actor/pg_loss", "actor/grad_norm", "critic/score/mean")
    assert all(resumed[0][k] == first_attempt[1][k] for k in same)


@pytest.mark.slurm
def test_the_grpo_twin_runs_on_verl_as_a_one_node_slurm_job_through_the_ray_template(smoke, slurm_cluster, tmp_path, capsys):
    """The grpo twin of verl_smoke submitted with launcher=slurm to the test cluster: one task of the Ray job
    array (a Ray head on the node, verl's trainer joining it), reusing the smoke run's data and SFT, then
    evaluated so that `slca results` has its numbers."""
    sweep_dir = tmp_path / "twin"
    run_dir = sweep_dir / "runs" / "estimator-grpo"
    shutil.copytree(smoke, run_dir, ignore=shutil.ignore_patterns("run.lock", "rl"))  # reuse data and SFT
    sweep_file = tmp_path / "twin.yaml"
    overrides = ["launcher=slurm", "launcher.gpus_per_node=0", "launcher.cpus_per_task=2", "launcher.time_min=30", "run.stages=[data,sft,rl,eval]", "eval.limit=2"]
    sweep_file.write_text(yaml.safe_dump({"name": "verl-twin", "experiment": "verl_smoke", "overrides": overrides, "grid": {"estimator": ["grpo"]}}))
    result = run_cli(["sweep", str(sweep_file), "--dir", str(sweep_dir), "--wait"], capsys)
    assert (sweep_dir / "manifest.json").exists(), result.err
    (entry,) = json.loads((sweep_dir / "manifest.json").read_text())["runs"].values()
    log = Path(entry["log"])
    assert result.code == 0, (result.err, result.out, log.read_text()[-5000:] if log.exists() else "no log")
    assert_real_steps(rl_steps(run_dir)[-2:], [1, 2])
    assert verl_steps(run_dir) == [1, 2]
    config = (run_dir / "rl" / "verl_config.yaml").read_text()
    assert "adv_estimator: grpo_slca" in config
    # verl joined the job's Ray cluster (ray.init takes no resources then) instead of starting its own.
    assert "num_cpus: 16" not in config and "Connecting to existing Ray cluster" in (run_dir / "rl" / "verl.log").read_text()
    job = entry["job_id"]
    assert job.endswith("_0") and entry["array_index"] == 0 and log.name == f"ray-{job}.out"
    record = json.loads((run_dir / "job.json").read_text())
    assert (record["state"], record["job_id"], record["log"], record["attempt"]) == ("done", job, str(log), 1)
    # The run is finished once its stages are; the job ends a moment later, when its Ray cluster is stopped.
    wait_until(lambda: job_field(job, "JobState") == "COMPLETED", "the job to end", 120)
    text = log.read_text()
    assert "Ray runtime started" in text and text.rstrip().endswith(f"slca: job {job} ended with exit status 0; its Ray cluster is stopped")
    assert not Path(f"/tmp/ray-{job_field(job, 'JobId')}").exists(), "the job's Ray temp dir is removed"
    result = run_cli(["results", str(sweep_dir)], capsys)
    assert result.code == 0 and "runs without results" not in result.out
    with open(sweep_dir / "results.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["estimator"] for r in rows} == {"grpo"} and {"eval/rl/process", "eval/sft/process"} <= {r["metric"] for r in rows}
