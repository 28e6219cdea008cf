"""End to end: `slca run experiment=embedded_smoke` with a real tiny model, tokenizer, generation,
simulator, rewards, SLCA-GRPO update, evaluation and W&B in offline mode; then stage skipping."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.pipeline.conftest import slca

# Full embedded runs (real tiny model, SFT, RL, eval): not in `make test-fast`.
pytestmark = pytest.mark.slow

def test_smoke_run_completes_every_stage(smoke_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    run_dir, proc = smoke_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for stage in ("data", "sft", "rl", "eval"):
        assert (run_dir / stage / "result.json").is_file(), stage
    spec = yaml.safe_load((run_dir / "spec.yaml").read_text())
    assert spec["experiment"] == "embedded_smoke" and spec["run"]["dir"] == "run"
    prov = json.loads((run_dir / "provenance.json").read_text())
    assert prov["packages"]["transformers"] and prov["seeds"]["run"] == 0


def test_a_piped_smoke_run_prints_no_blank_line_where_its_progress_bars_were(smoke_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    _, proc = smoke_run  # stdout and stderr are pipes here, as in `slca run ... | cat`
    assert proc.returncode == 0
    assert [n for n, line in enumerate(proc.stdout.splitlines()) if not line.strip()] == [], proc.stdout
    assert [n for n, line in enumerate(proc.stderr.splitlines()) if not line.strip()] == [], proc.stderr


def test_smoke_metrics_cover_each_stage(smoke_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    run_dir, _ = smoke_run
    lines = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    stages = {line["stage"] for line in lines}
    assert {"sft", "rl", "summary"} <= stages
    rl = [line for line in lines if line["stage"] == "rl" and "reward/score_mean" in line]
    assert len(rl) == 2  # train.rl.max_steps
    for key in ("reward/process_mean", "reward/summary_mean", "groups/zero_variance_frac", "rollout/tool_rounds_mean",
                "time/rollout_s", "time/update_s", "entropy/all", "loss/policy", "rollout/response_length_mean"):
        assert key in rl[-1], key
    sft = [line for line in lines if line["stage"] == "sft"]
    assert sft and all(line["loss"] > 0 for line in sft)
    periodic = [line for line in lines if line["stage"] == "rl_eval"]
    assert [line["step"] for line in periodic] == [0, 2]  # before training and every 2 steps
    assert all(0.0 <= line["eval/process"] <= 1.0 and line["train_s"] >= 0 for line in periodic)


def test_smoke_eval_report_compares_sft_and_rl(smoke_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    run_dir, proc = smoke_run
    report = json.loads((run_dir / "eval" / "results.json").read_text())
    assert [r["card"]["model"]["label"] for r in report["results"]] == ["sft", "rl"]
    rl = report["results"][1]
    cell = rl["cells"][0]
    assert cell["protocol"] == {"construction": "native", "thinking": "keep", "system_prompt": "dataset_template"}
    for metric in ("exact", "parseable", "name_f1", "arg_match", "process", "success", "tool_rounds"):
        assert metric in cell["metrics"]
    assert cell["metrics"]["rows"]["mean"] == 16  # eval.limit
    assert rl["card"]["seeds"]["used"] == [0] and rl["card"]["model"]["path"] == str(run_dir / "rl" / "model")
    assert "evaluation (one run (1 seed))" in proc.stdout and (run_dir / "eval" / "table.md").is_file()


def test_wandb_runs_offline_inside_the_run_dir(smoke_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    run_dir, _ = smoke_run
    offline = list((run_dir / "wandb").glob("offline-run-*"))
    assert offline, "W&B offline run directory missing"
    assert any(offline[0].rglob("*.wandb"))


def test_second_run_skips_finished_stages(smoke_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    run_dir, _ = smoke_run
    proc = slca("run", "--spec", str(run_dir / "spec.yaml"), "run.resume=true", cwd=run_dir.parent)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for stage in ("data", "sft", "rl", "eval"):
        assert f"[{stage}] already done, skipped" in proc.stdout
