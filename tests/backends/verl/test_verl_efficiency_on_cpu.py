"""The efficiency methods inside a real verl 0.9.1 run on CPU (`experiment=verl_efficiency_smoke`):
max-variance down-sampling keeps 2 of 4 rollouts per prompt and verl updates on exactly those; the
pre-rollout filter skips the prompts that were all-correct last epoch and re-admits them after one
skipped epoch; a resumed run restores the filter from verl's checkpoint and skips the same prompts.

Which prompts are all-correct is fixed before the run by a test reward (`forced_reward.py`: slca's
reward with the even prompts forced correct and the odd ones capped below success), so the
filter's decisions are known: 8 prompts, 4 per step, 5 steps = epoch 0 (steps 1-2, all 8), epoch 1
(step 3, the 4 odd ones), epoch 2 (steps 4-5, all 8 again).
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.verl]

FORCED_REWARD = Path(__file__).with_name("forced_reward.py").resolve()
EVENS, ODDS = {0, 2, 4, 6}, {1, 3, 5, 7}


def run_slca(run_dir: Path) -> subprocess.CompletedProcess:
    # verl runs in the rl stage's folder: its dump of each trained batch lands in rl/dump, and a
    # copied run directory resumes with the very same spec.
    overrides = f"backend.overrides=['reward.custom_reward_function.path={FORCED_REWARD}','trainer.rollout_data_dir=dump']"
    argv = [sys.executable, "-m", "slca.cli", "run", "experiment=verl_efficiency_smoke", f"run.dir={run_dir}", overrides]
    return subprocess.run(argv, capture_output=True, text=True)


def verl_metrics(run_dir: Path) -> dict[int, dict]:
    lines = (run_dir / "rl" / "verl_metrics.jsonl").read_text().splitlines()
    return {r["step"]: r["data"] for r in map(json.loads, filter(str.strip, lines))}


def filter_state(run_dir: Path, step: int) -> dict:
    return json.loads((run_dir / "rl" / "checkpoints" / f"global_step_{step}" / "slca_prompt_filter.json").read_text())


@pytest.fixture(scope="module")
def efficient(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("verl_eff") / "run"
    result = run_slca(run_dir)
    log = run_dir / "rl" / "verl.log"
    assert result.returncode == 0, (result.stderr[-3000:], log.read_text()[-5000:] if log.exists() else "")
    return run_dir


def test_verl_keeps_two_of_four_rollouts_per_prompt_and_updates_on_exactly_those(efficient):
    steps = verl_metrics(efficient)
    assert sorted(steps) == [1, 2, 3, 4, 5]
    for step, m in steps.items():
        assert (m["slca/downsample/groups"], m["slca/downsample/rollouts"], m["slca/downsample/rollouts_kept"]) == (4, 16, 8)
        assert m["slca/downsample/min_kept_per_group"] == m["slca/downsample/max_kept_per_group"] == 2
        assert math.isfinite(m["actor/pg_loss"]) and math.isfinite(m["actor/grad_norm"])
        # verl's own dump of the batch it trained on: 8 rollouts, 2 sessions of each of 4 prompts.
        rows = [json.loads(line) for line in (efficient / "rl" / "dump" / f"{step}.jsonl").read_text().splitlines()]
        per_prompt = Counter(row["uid"].rsplit("_", 2)[0] for row in rows)
        assert len(rows) == 8 and sorted(per_prompt.values()) == [2, 2, 2, 2], (step, per_prompt)
    assert max(m["actor/grad_norm"] for m in steps.values()) > 0


def test_an_all_correct_prompt_is_not_rolled_out_next_epoch_and_comes_back_at_readmission(efficient):
    state = filter_state(efficient, 5)["filter"]
    epoch0, epoch1 = (dict(map(tuple, e)) for e in state["outcome_log"])
    assert epoch0 == {**{p: "correct" for p in EVENS}, **{p: "wrong" for p in ODDS}}
    assert set(epoch1) == ODDS  # the all-correct prompts were not rolled out in epoch 1
    assert {pid for pid, _ in state["current"]["rollouts"]} == EVENS | ODDS  # epoch 2: re-admitted
    assert state["epoch"] == 2 and state["metrics_log"][1]["skipped"] == 4
    steps = verl_metrics(efficient)
    total = Counter()
    for m in steps.values():
        total.update({k: m[f"slca/prefilter/{k}"] for k in ("admitted", "skipped", "readmitted")})
    assert total == Counter(admitted=20, skipped=4, readmitted=4)
    assert steps[3]["slca/prefilter/epoch"] == 1 and steps[5]["slca/prefilter/epoch"] == 2


def test_a_resumed_run_restores_the_filter_from_verls_checkpoint_and_skips_the_same_prompts(efficient, tmp_path):
    run_dir = tmp_path / "resumed"
    shutil.copytree(efficient, run_dir, ignore=shutil.ignore_patterns("run.lock"))
    checkpoints = run_dir / "rl" / "checkpoints"
    for step in (3, 4, 5):  # as if killed after step 2: epoch 0's outcomes are only in the filter state
        shutil.rmtree(checkpoints / f"global_step_{step}")
    (checkpoints / "latest_checkpointed_iteration.txt").write_text("2")
    for name in ("result.json", "summary.json", "verl_metrics.jsonl"):
        (run_dir / "rl" / name).unlink()
    shutil.rmtree(run_dir / "rl" / "model")
    result = run_slca(run_dir)
    assert result.returncode == 0, result.stderr[-3000:]
    resumed, original = verl_metrics(run_dir), verl_metrics(efficient)
    assert sorted(resumed) == [3, 4, 5]
    keys = ("admitted", "skipped", "readmitted", "epoch")
    for step in (3, 4, 5):
        assert [resumed[step][f"slca/prefilter/{k}"] for k in keys] == [original[step][f"slca/prefilter/{k}"] for k in keys], step
    again, first = filter_state(run_dir, 5)["filter"], filter_state(efficient, 5)["filter"]
    # The same decisions; within a step verl orders groups by random uid, so compare as mappings.
    def decisions(state: dict) -> tuple:
        records = {pid: rest for pid, *rest in state["records"]}
        return records, [dict(map(tuple, e)) for e in state["outcome_log"]], {pid for pid, _ in state["current"]["rollouts"]}

    assert decisions(again) == decisions(first)
