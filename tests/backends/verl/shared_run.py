"""The spec of the suite's shared verl run (tests/backends/verl/test_verl_run_on_cpu.py):
`experiment=verl_efficiency_smoke`, verl with slca's reward under `forced_reward.py`, verl dumping
every trained batch into the rl stage's folder; and what the verl runs' tests read from a run
directory (the GRPO twin on SLURM in tests/launch/test_verl_ray_jobs.py too)."""

from __future__ import annotations

import json
import math
from pathlib import Path

FORCED_REWARD = Path(__file__).with_name("forced_reward.py").resolve()
# verl runs in the rl stage's folder: its dump of each trained batch lands in rl/dump, and a copied run
# directory resumes with the very same spec.
VERL_RUN = [
    "experiment=verl_efficiency_smoke",
    f"backend.overrides=['reward.custom_reward_function.path={FORCED_REWARD}','trainer.rollout_data_dir=dump']",
]


def rl_steps(run_dir: Path) -> list[dict]:
    """The run's RL records in metrics.jsonl, in file order."""
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("stage") == "rl"]


def verl_metrics(run_dir: Path) -> dict[int, dict]:
    """step -> verl's own metrics of this attempt (rl/verl_metrics.jsonl)."""
    lines = (run_dir / "rl" / "verl_metrics.jsonl").read_text().splitlines()
    return {r["step"]: r["data"] for r in map(json.loads, filter(str.strip, lines))}


def verl_steps(run_dir: Path) -> list[int]:
    """The steps of this attempt's rl/verl_metrics.jsonl, in file order (a step logged twice shows twice)."""
    lines = (run_dir / "rl" / "verl_metrics.jsonl").read_text().splitlines()
    return [json.loads(line)["step"] for line in lines if line.strip()]


def assert_real_steps(steps: list[dict], expected: list[int], *, some_step_updates: bool = True) -> None:
    """Real verl updates: finite losses, sampled responses, HierR-range scores, rollout and actor in sync, a
    gradient wherever some group did not tie, and (some_step_updates) at least one such step."""
    assert [s["step"] for s in steps] == expected
    for s in steps:
        assert math.isfinite(s["actor/pg_loss"]) and math.isfinite(s["actor/grad_norm"])
        assert s["response_length/mean"] > 0
        assert -0.5 <= s["critic/score/mean"] <= 1.0  # HierR's range (a malformed call scores -0.5)
        # Rollout log-probs against the actor's: a broken weight sync shows up here (~1e-4 when synced).
        assert s["training/rollout_probs_diff_max"] < 1e-2
    # A step whose groups all tied has zero advantages and legitimately no gradient; the message shows which.
    seen = [{k: s.get(k) for k in ("step", "actor/grad_norm", "critic/score/min", "critic/score/max", "critic/advantages/min", "critic/advantages/max")} for s in steps]
    for s in steps:
        if s["critic/advantages/min"] != 0 or s["critic/advantages/max"] != 0:
            assert s["actor/grad_norm"] > 0, seen
    if some_step_updates:
        assert max(s["actor/grad_norm"] for s in steps) > 0, seen
