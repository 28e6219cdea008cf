"""Real verl 0.9.1 steps of SLCA-GRPO on CPU through the CLI, one run read by every assertion that can
read it: `slca run experiment=verl_efficiency_smoke` (tests/backends/verl/shared_run.py) on the
untrained tiny backbone, verl's own trainer with slca's CPU platform, transformers rollout, tool agent
loop with the schema simulator, reward, trainer, pre-rollout filter and max-variance down-sampling. A
copy of it, cut back to an earlier checkpoint, is resumed. (Multi-turn tool rounds of an SFT-trained
policy on verl: the GRPO twin in tests/launch/test_verl_ray_jobs.py.)

Which prompts are all-correct is fixed before the run by a test reward (`forced_reward.py`: slca's
reward with the even prompts forced correct and the odd ones capped below success), so the filter's
decisions are known: 8 prompts, 4 per step, 5 steps = epoch 0 (steps 1-2, all 8), epoch 1 (step 3,
the 4 odd ones), epoch 2 (steps 4-5, all 8 again). Down-sampling keeps 2 of 4 rollouts per prompt.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest

from tests.backends.verl.shared_run import VERL_RUN, assert_real_steps, rl_steps, verl_metrics, verl_steps

pytestmark = [pytest.mark.slow, pytest.mark.verl]

EVENS, ODDS = {0, 2, 4, 6}, {1, 3, 5, 7}
STEPS = [1, 2, 3, 4, 5]


def run_slca(run_dir: Path) -> tuple[subprocess.CompletedProcess, float, float]:
    """(the finished CLI process, wall seconds, peak memory in GiB of it and every process under it,
    as proportional set size: pages shared between the Ray workers are counted once)."""
    start = time.perf_counter()
    argv = [sys.executable, "-m", "slca.cli", "run", *VERL_RUN, f"run.dir={run_dir}"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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


def verl_log_tail(run_dir: Path) -> str:
    log = run_dir / "rl" / "verl.log"
    return log.read_text()[-5000:] if log.exists() else ""


def filter_state(run_dir: Path, step: int) -> dict:
    return json.loads((run_dir / "rl" / "checkpoints" / f"global_step_{step}" / "slca_prompt_filter.json").read_text())


@pytest.fixture(scope="module")
def verl_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("verl") / "run"
    result, wall, peak = run_slca(run_dir)
    print(f"verl run: wall {wall:.0f} s, peak PSS {peak:.2f} GiB")
    assert result.returncode == 0, (result.stderr[-3000:], verl_log_tail(run_dir))
    return run_dir


def test_verl_runs_real_slca_grpo_steps_on_cpu_and_logs_verls_metrics(verl_run):
    steps = rl_steps(verl_run)
    assert_real_steps(steps, STEPS)
    assert all("slca/zero_variance_group_frac" in s and "slca/adv_summary_abs_mean" in s for s in steps)
    assert (verl_run / "rl" / "checkpoints" / f"global_step_{STEPS[-1]}" / "actor").is_dir()
    result = json.loads((verl_run / "rl" / "result.json").read_text())
    assert "model_dir" in json.dumps(result)


def test_the_final_actor_is_a_hugging_face_model_the_local_backend_loads(verl_run):
    from slca.models.load import load_backbone

    model, tokenizer = load_backbone(verl_run / "rl" / "model")
    ids = tokenizer("hello", return_tensors="pt").input_ids
    logits = model(input_ids=ids).logits
    assert logits.shape[-1] == model.config.vocab_size and bool(logits.isfinite().all())


def test_verl_keeps_two_of_four_rollouts_per_prompt_and_updates_on_exactly_those(verl_run):
    steps = verl_metrics(verl_run)
    assert sorted(steps) == STEPS
    for step, m in steps.items():
        assert (m["slca/downsample/groups"], m["slca/downsample/rollouts"], m["slca/downsample/rollouts_kept"]) == (4, 16, 8)
        assert m["slca/downsample/min_kept_per_group"] == m["slca/downsample/max_kept_per_group"] == 2
        # verl's own dump of the batch it trained on: 8 rollouts, 2 sessions of each of 4 prompts.
        rows = [json.loads(line) for line in (verl_run / "rl" / "dump" / f"{step}.jsonl").read_text().splitlines()]
        per_prompt = Counter(row["uid"].rsplit("_", 2)[0] for row in rows)
        assert len(rows) == 8 and sorted(per_prompt.values()) == [2, 2, 2, 2], (step, per_prompt)


def test_an_all_correct_prompt_is_not_rolled_out_next_epoch_and_comes_back_at_readmission(verl_run):
    state = filter_state(verl_run, 5)["filter"]
    epoch0, epoch1 = (dict(map(tuple, e)) for e in state["outcome_log"])
    assert epoch0 == {**{p: "correct" for p in EVENS}, **{p: "wrong" for p in ODDS}}
    assert set(epoch1) == ODDS  # the all-correct prompts were not rolled out in epoch 1
    assert {pid for pid, _ in state["current"]["rollouts"]} == EVENS | ODDS  # epoch 2: re-admitted
    assert state["epoch"] == 2 and state["metrics_log"][1]["skipped"] == 4
    steps = verl_metrics(verl_run)
    total = Counter()
    for m in steps.values():
        total.update({k: m[f"slca/prefilter/{k}"] for k in ("admitted", "skipped", "readmitted")})
    assert total == Counter(admitted=20, skipped=4, readmitted=4)
    assert steps[3]["slca/prefilter/epoch"] == 1 and steps[5]["slca/prefilter/epoch"] == 2


def test_a_run_killed_after_a_checkpoint_resumes_from_it_with_its_filter_state_and_records_each_step_once(verl_run, tmp_path):
    run_dir = tmp_path / "resumed"
    shutil.copytree(verl_run, run_dir, ignore=shutil.ignore_patterns("run.lock"))
    # As if the run had been killed after logging step 4 and before saving its checkpoint: verl's own
    # metrics file holds steps 1-4, the run's metrics.jsonl none of them yet (verl's steps are read in
    # when verl ends), the newest checkpoint is step 3's, and the outcomes of epochs 0 and 1 are only in
    # the filter state saved with it. (Two steps left keep the resumed attempt short: a verl step costs
    # seconds, a verl start a minute and more.)
    checkpoints = run_dir / "rl" / "checkpoints"
    for step in (4, 5):
        shutil.rmtree(checkpoints / f"global_step_{step}")
    (checkpoints / "latest_checkpointed_iteration.txt").write_text("3")
    for name in ("result.json", "summary.json"):
        (run_dir / "rl" / name).unlink()
    shutil.rmtree(run_dir / "rl" / "model")
    verl_file = run_dir / "rl" / "verl_metrics.jsonl"
    verl_file.write_text("".join(line for line in verl_file.read_text().splitlines(keepends=True) if json.loads(line)["step"] <= 4))
    lines = (run_dir / "metrics.jsonl").read_text().splitlines(keepends=True)
    (run_dir / "metrics.jsonl").write_text("".join(line for line in lines if json.loads(line).get("stage") != "rl"))

    result, _, _ = run_slca(run_dir)
    assert result.returncode == 0, (result.stderr[-3000:], verl_log_tail(run_dir))
    resumed, original = verl_metrics(run_dir), verl_metrics(verl_run)
    assert verl_steps(run_dir) == [4, 5]  # steps 1-3 came from the checkpoint, only 4 and 5 ran
    assert (checkpoints / "global_step_5" / "actor").is_dir() and (run_dir / "rl" / "model").is_dir()
    # The killed attempt's file was kept aside, and the run's record has each step once: steps 1-3 as the
    # killed attempt logged them, 4 and 5 as the resumed attempt ran them.
    kept = (run_dir / "rl" / "verl_metrics.attempt-1.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in kept] == [1, 2, 3, 4]
    first_attempt = {s["step"]: s for s in rl_steps(verl_run)}
    records = rl_steps(run_dir)
    assert [s["step"] for s in records] == STEPS
    same = ("actor/pg_loss", "actor/grad_norm", "critic/score/mean")
    assert all(records[i][k] == first_attempt[i + 1][k] for i in (0, 1, 2) for k in same)

    # The filter restored from step 3's checkpoint makes the same decisions in epoch 2: it re-admits the
    # prompts epoch 1 skipped, which it knows only from the restored state.
    keys = ("admitted", "skipped", "readmitted", "epoch")
    for step in (4, 5):
        assert [resumed[step][f"slca/prefilter/{k}"] for k in keys] == [original[step][f"slca/prefilter/{k}"] for k in keys], step
    again, first = filter_state(run_dir, 5)["filter"], filter_state(verl_run, 5)["filter"]

    # Within a step verl orders groups by random uid, so compare as mappings.
    def decisions(state: dict) -> tuple:
        records = {pid: rest for pid, *rest in state["records"]}
        return records, [dict(map(tuple, e)) for e in state["outcome_log"]], {pid for pid, _ in state["current"]["rollouts"]}

    assert decisions(again) == decisions(first)
