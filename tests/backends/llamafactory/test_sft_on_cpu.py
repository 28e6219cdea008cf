"""Real LLaMA-Factory SFT on CPU: `slca run backend=llamafactory` on the tiny backbone and the
synthetic split, then the checkpoint in the local backend; and the converted reference samples
through the same stage without a dropped row."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.llamafactory]

# 100 optimiser steps: about a minute on two idle cores; after them 6 of 16 greedy first replies hold a
# parseable call, none before (200 steps gave >90%, for twice the time: the test asks only for more).
N_SFT = 80
EPOCHS = 5
BATCH = 4


def sft_overrides(lf_env: Path) -> list[str]:
    """The tiny SFT with the option's defaults (fp32, one process, no DeepSpeed); the tiny tokenizer
    learns its merges from JSON tool schemas (tools_block=qwen), as LLaMA-Factory's `qwen` layout
    renders them."""
    return [
        "experiment=embedded_smoke", "backend=llamafactory", "run.stages=[data,sft]", "logger=none",
        f"backend.executable={lf_env / 'bin' / 'llamafactory-cli'}",
        f"data.n_sft={N_SFT}", f"train.sft.max_rows={N_SFT}", f"train.sft.epochs={EPOCHS}", f"train.sft.batch_size={BATCH}",
        f"train.sft.micro_batch_size={BATCH}", "train.sft.lr=5e-3", "train.sft.max_length=1024", "backbone.tools_block=qwen",
    ]


@pytest.fixture(scope="module")
def sft_run(lf_env, tmp_path_factory):
    """(run dir, finished `slca run` process, wall seconds) of one tiny SFT through the real CLI."""
    work = tmp_path_factory.mktemp("lf_sft")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "slca.cli", "run", *sft_overrides(lf_env), "run.dir=run"],
                          capture_output=True, text=True, cwd=work, timeout=1200)
    return work / "run", proc, time.perf_counter() - start


def test_a_tiny_sft_through_llamafactory_completes_and_its_loss_curve_lands_in_metrics(sft_run):
    run_dir, proc, wall = sft_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    print(f"tiny LLaMA-Factory SFT run: {wall:.1f} s wall")
    result = json.loads((run_dir / "sft" / "result.json").read_text())
    assert result["rows"] == result["examples_trained"] == N_SFT  # LLaMA-Factory dropped nothing
    assert result["template"] == "qwen"
    steps = EPOCHS * -(-N_SFT // BATCH)
    assert result["steps"] == steps
    curve = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    curve = [m for m in curve if m["stage"] == "sft"]
    assert [m["step"] for m in curve] == list(range(1, steps + 1))
    first, last = sum(m["loss"] for m in curve[:5]) / 5, sum(m["loss"] for m in curve[-5:]) / 5
    assert last < 0.5 * first, (first, last)
    assert (run_dir / result["log"]).read_text().count("'loss'") >= steps  # the log streamed LLaMA-Factory's own output
    model_dir = run_dir / result["model_dir"]
    assert model_dir.is_relative_to(run_dir / "sft") and (model_dir / "config.json").is_file()


def _tool_call_rate(model_dir: Path, rows: list[dict]) -> float:
    """Share of greedy first replies holding a parseable hermes tool call, prompts rendered by the
    rollout code from the model's own tokenizer."""
    import torch

    from slca.models.load import load_backbone
    from slca.rollout.chat import ChatFormat
    from slca.toolcall.parse import parse_hermes

    model, tokenizer = load_backbone(model_dir)
    fmt = ChatFormat(tokenizer)
    hits = 0
    for row in rows:
        messages = [m for m in row["prompt"] if m["role"] != "system"]  # trained without the dataset system turn
        ids = tokenizer(fmt.render_prompt(messages, json.loads(row["tools"])), return_tensors="pt", add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            out = model.generate(ids, max_new_tokens=96, do_sample=False, eos_token_id=sorted(fmt.stop_token_ids),
                                 pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id)
        text = tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=False)
        hits += any(block.valid for block in parse_hermes(text).blocks)
    return hits / len(rows)


def test_the_checkpoint_loads_in_the_local_backend_and_calls_tools_more_often_than_the_untrained_model(sft_run):
    from slca.data.io import read_rows

    run_dir, proc, _ = sft_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((run_dir / "data" / "result.json").read_text())
    rows = list(read_rows(run_dir / data["eval"]))[:16]  # a recorded path is relative to the run dir, or absolute
    before = _tool_call_rate(run_dir / "sft" / "base_model", rows)
    after = _tool_call_rate(run_dir / json.loads((run_dir / "sft" / "result.json").read_text())["model_dir"], rows)
    print(f"parseable tool calls: untrained {before:.2f}, after LLaMA-Factory SFT {after:.2f}")
    assert after > before


def test_the_converted_reference_samples_train_without_a_dropped_row(lf_env, tmp_path):
    from slca.backends.llamafactory.stages import sft_stage
    from slca.config.compose import compose_spec
    from slca.config.groups.logger import NoLogger
    from slca.data.io import write_rows
    from slca.pipeline import RunContext
    from slca.stage_results import DataResult, StageResults
    from slca.tracking import open_tracker
    from tests.data.helpers import SFT_PREVIEW, conversations_from_reference, load_jsonl

    source = tmp_path / "toucan_sft.parquet"
    rows = [conversations_from_reference(r) for r in load_jsonl(SFT_PREVIEW)]
    write_rows(source, iter(rows))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    spec = compose_spec([*sft_overrides(lf_env), "train.sft.epochs=1", f"run.dir={run_dir}", "train.sft.batch_size=1",
                         "train.sft.micro_batch_size=1", f"backbone.cache_dir={tmp_path / 'backbones'}"])
    with open_tracker(run_dir, NoLogger(), spec_dict={}, run_name="ref") as tracker:
        data = DataResult(sft=str(source), rl=str(source), eval=str(source))
        result = sft_stage(RunContext(spec=spec, run_dir=run_dir, tracker=tracker, results=StageResults(data=data))).details
    assert result["rows"] == result["examples_trained"] == len(rows) == 5
    log = (run_dir / result["log"]).read_text()
    assert "abnormal example" not in log and "Invalid role tag" not in log


def test_the_sft_output_is_the_starting_model_of_an_rl_run_on_the_local_backend(sft_run):
    """The hand-off is one spec away: the RL run names the SFT output directory as its backbone."""
    run_dir, proc, _ = sft_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    model_dir = run_dir / json.loads((run_dir / "sft" / "result.json").read_text())["model_dir"]
    rl = subprocess.run(
        [sys.executable, "-m", "slca.cli", "run", "experiment=embedded_smoke", "run.stages=[data,rl]", "logger=none", "run.dir=rl",
         "backbone=qwen2.5-3b-instruct", "backbone.name=lf-sft-tiny", f"backbone.hub_id={model_dir}", "backbone.max_position_embeddings=2048",
         "train.rl.max_steps=1", "train.rl.prompts_per_step=2", "train.rl.mini_batch_prompts=2", "train.rl.n=2",
         "train.rl.max_prompt_length=1024", "train.rl.max_response_length=96"],
        capture_output=True, text=True, cwd=run_dir.parent, timeout=900)
    assert rl.returncode == 0, rl.stdout[-3000:] + rl.stderr[-3000:]
    steps = [json.loads(line) for line in (run_dir.parent / "rl" / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in steps if m["stage"] == "rl"] == [1]


def test_a_failing_llamafactory_run_ends_in_its_own_error_line_and_the_log_path(lf_env, tmp_path, capsys, monkeypatch):
    from tests.badinput import assert_refused, run_cli

    monkeypatch.chdir(tmp_path)
    result = run_cli(["run", *sft_overrides(lf_env), "run.dir=run", "+backend.overrides.template=nope"], capsys)
    assert_refused(result, "LLaMA-Factory failed", "Template nope does not exist", str((tmp_path / "run" / "sft" / "llamafactory.log").resolve()))
    assert not (tmp_path / "run" / "sft" / "result.json").exists()
