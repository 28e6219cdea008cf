"""Spec → LLaMA-Factory: the train YAML, DeepSpeed config and command, the composition rules, the
dry run through the real CLI, and how a failed run is reported. None of these run the trainer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from slca.backends.llamafactory import runner, template, trainargs
from tests.badinput import assert_refused, run_cli, snapshot


def _paper_sft(*overrides: str):
    from slca.config.compose import compose_spec

    return compose_spec(["experiment=paper_sft", "run.dir=/runs/sft", *overrides])


def _paths(ds: Path | None = Path("/runs/sft/sft/deepspeed.json")) -> trainargs.Paths:
    return trainargs.Paths("Qwen/Qwen2.5-3B-Instruct", Path("/runs/sft/sft/data"), Path("/runs/sft/sft/model"), ds)


def test_paper_sft_becomes_the_reference_recipe_on_eight_gpus():
    spec = _paper_sft()
    args = trainargs.train_args(spec, _paths(), template.lf_template(spec))
    assert args["model_name_or_path"] == "Qwen/Qwen2.5-3B-Instruct"
    assert (args["stage"], args["finetuning_type"], args["template"]) == ("sft", "full", "qwen")
    assert (args["dataset"], args["dataset_dir"]) == ("slca_sft", "/runs/sft/sft/data")
    assert args["cutoff_len"] == 16384
    assert (args["num_train_epochs"], args["learning_rate"], args["lr_scheduler_type"], args["warmup_ratio"]) == (2.0, 5e-6, "cosine", 0.1)
    # 32 conversations per optimiser step = 1 per GPU x 8 GPUs x 4 accumulated micro-batches
    assert args["per_device_train_batch_size"] * 8 * args["gradient_accumulation_steps"] == 32
    assert (args["bf16"], args["fp16"], args["flash_attn"]) == (True, False, "fa2")
    assert args["deepspeed"] == "/runs/sft/sft/deepspeed.json"
    assert args["output_dir"].startswith("/runs/sft/")
    assert args["report_to"] == "wandb"

    argv, env = trainargs.command(spec, "/env/bin/llamafactory-cli", Path("/runs/sft/sft/train.yaml"))
    assert argv == ["/env/bin/llamafactory-cli", "train", "/runs/sft/sft/train.yaml"]
    assert (env["FORCE_TORCHRUN"], env["NPROC_PER_NODE"], env["NNODES"]) == ("1", "8", "1")
    assert (env["WANDB_MODE"], env["WANDB_DIR"]) == ("offline", "/runs/sft")
    assert trainargs.shell_line(argv, env).endswith("/env/bin/llamafactory-cli train /runs/sft/sft/train.yaml")


def test_one_process_without_wandb_runs_plain_and_reports_nowhere():
    spec = _paper_sft("logger=none", "backend.nproc_per_node=1", "backend.deepspeed=null", "backend.precision=fp32",
                      "train.sft.scheduler=constant", "train.sft.max_rows=7", "train.sft.save_every_steps=5",
                      "+backend.overrides.save_only_model=true")
    args = trainargs.train_args(spec, _paths(None), "qwen")
    argv, env = trainargs.command(spec, "cli", Path("t.yaml"))
    assert env == {} and argv == ["cli", "train", "t.yaml"]
    assert args["report_to"] == "none" and "deepspeed" not in args
    assert (args["bf16"], args["fp16"]) == (False, False)
    assert args["gradient_accumulation_steps"] == 32 and args["lr_scheduler_type"] == "constant_with_warmup"
    assert (args["max_samples"], args["save_strategy"], args["save_steps"]) == (7, "steps", 5)
    assert args["save_only_model"] is True  # overrides come last


@pytest.mark.parametrize("preset, stage", [("ds_z2", 2), ("ds_z3", 3)])
def test_deepspeed_presets_are_zero_stages_whose_sizes_the_trainer_fills(preset, stage):
    config = trainargs.deepspeed_config(preset)
    assert config["zero_optimization"]["stage"] == stage
    for key in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "gradient_clipping"):
        assert config[key] == "auto"
    json.dumps(config)


@pytest.mark.parametrize(
    "overrides, mentions",
    [
        (["train.sft.batch_size=30"], ["train.sft.batch_size", "30"]),
        (["backend.nproc_per_node=3"], ["train.sft.batch_size", "3"]),
        (["train.sft.micro_batch_size=3", "backend.nproc_per_node=1"], ["train.sft.batch_size"]),
        (["backbone=tiny", "backend.template=llama3"], ["backend.template", "qwen"]),
        (["backend.precision=fp8"], ["backend.precision"]),
        (["backend.logging_steps=0"], ["backend.logging_steps"]),
    ],
)
def test_specs_llamafactory_cannot_run_are_refused_at_composition(overrides, mentions, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_cli(["run", "experiment=paper_sft", *overrides, "--cfg", "job"], capsys)
    assert_refused(result, *mentions)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "tail, expected",
    [
        (["Traceback (most recent call last):", '  File "x.py", line 3, in <module>', "ValueError: Template nope does not exist."],
         "ValueError: Template nope does not exist."),
        (["[rank1]: Traceback (most recent call last):", "[rank1]: torch.OutOfMemoryError: CUDA out of memory.", "W1201 torchrun: failures"],
         "torch.OutOfMemoryError: CUDA out of memory."),
        (["[INFO|x] loading", "[ERROR|2026-12-01] llamafactory: Output directory already exists", ""],
         "[ERROR|2026-12-01] llamafactory: Output directory already exists"),
        (["just a last line", "  "], "just a last line"),
        ([], "no output"),
    ],
)
def test_the_reported_error_is_the_last_line_that_names_one(tail, expected):
    assert runner.error_line(tail) == expected


def test_a_missing_executable_is_one_line_naming_the_field_and_the_make_target(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_cli(["run", *_tiny_run("run"), "backend.executable=nowhere/llamafactory-cli"], capsys)
    assert_refused(result, "backend.executable", "make llamafactory-env")


def _tiny_run(run_dir: str) -> list[str]:
    return ["experiment=embedded_smoke", "backend=llamafactory", "run.stages=[data,sft]", f"run.dir={run_dir}", "logger=none",
            "data.n_sft=24", "train.sft.max_rows=24", "train.sft.batch_size=4", "train.sft.micro_batch_size=2", "backend.nproc_per_node=2",
            "backbone.hidden_size=32", "backbone.num_layers=1", "backbone.num_heads=2", "backbone.num_kv_heads=1",
            "backbone.intermediate_size=64", "backbone.vocab_size=600"]


def test_dry_run_writes_what_llamafactory_reads_and_prints_the_exact_command(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_cli(["run", "--dry-run", *_tiny_run("run"), "backend.deepspeed=ds_z3"], capsys)
    assert result.code == 0 and "dry run" in result.out, result.err
    stage = tmp_path / "run" / "sft"
    args = yaml.safe_load((stage / "train.yaml").read_text())
    line = next(s for s in result.out.splitlines() if s.startswith("[sft] command: "))[len("[sft] command: "):]
    assert line == f"FORCE_TORCHRUN=1 NNODES=1 NODE_RANK=0 NPROC_PER_NODE=2 {Path('.cache/llamafactory-env/bin/llamafactory-cli').resolve()} train {stage.resolve() / 'train.yaml'}"
    info = json.loads((stage / "data" / "dataset_info.json").read_text())
    entry = info[args["dataset"]]
    assert entry["formatting"] == "sharegpt"
    assert len((stage / "data" / entry["file_name"]).read_text().splitlines()) == 24
    assert json.loads((stage / "deepspeed.json").read_text())["zero_optimization"]["stage"] == 3
    assert args["deepspeed"] == str((stage / "deepspeed.json").resolve())
    assert args["output_dir"] == str((stage / "model").resolve())
    assert args["model_name_or_path"] == str((stage / "base_model").resolve())
    assert (stage / "base_model" / "chat_template.jinja").read_text() == template.qwen_tools_template()
    assert not (stage / "result.json").exists()

    # a second dry run rewrites the same files
    before = snapshot([stage / "train.yaml", stage / "data", stage / "deepspeed.json"])
    run_cli(["run", "--dry-run", *_tiny_run("run"), "backend.deepspeed=ds_z3"], capsys)
    assert snapshot([stage / "train.yaml", stage / "data", stage / "deepspeed.json"]) == before


def test_the_loss_curve_is_read_in_step_order_and_a_resumed_step_keeps_its_newest_record(tmp_path):
    records = [
        {"current_steps": 1, "total_steps": 3, "loss": 2.0, "lr": 1e-3, "epoch": 0.3},
        {"current_steps": 2, "total_steps": 3, "loss": 1.5, "lr": 1e-3, "epoch": 0.6},
        {"current_steps": 2, "total_steps": 3, "loss": 1.4, "lr": 1e-3, "epoch": 0.6},  # after resuming from step 1
        {"current_steps": 3, "total_steps": 3, "loss": 1.0, "lr": 0.0, "epoch": 1.0, "grad_norm": 0.5},
        {"current_steps": 3, "total_steps": 3, "epoch": 1.0, "train_runtime": 4.2},  # the summary, no loss
    ]
    text = "\n".join(json.dumps(r) for r in records) + "\n{not json\n"
    (tmp_path / "trainer_log.jsonl").write_text(text)
    curve = list(runner.loss_curve(tmp_path))
    assert [step for step, _ in curve] == [1, 2, 3]
    assert [m["loss"] for _, m in curve] == [2.0, 1.4, 1.0]
    assert curve[-1][1] == {"loss": 1.0, "lr": 0.0, "epoch": 1.0, "grad_norm": 0.5}
    assert list(runner.loss_curve(tmp_path / "missing")) == []


def test_an_sft_stage_without_the_data_stage_before_it_converts_the_spec_s_own_sft_split(tmp_path, capsys, monkeypatch):
    from slca.config.compose import compose_spec
    from slca.data.io import read_rows
    from slca.data.synth import ensure_synthetic

    monkeypatch.chdir(tmp_path)
    result = run_cli(["run", "--dry-run", *_tiny_run("run"), "run.stages=[sft]"], capsys)
    assert result.code == 0, result.err
    spec = compose_spec(_tiny_run("run"))
    rows = len(list(read_rows(ensure_synthetic(spec.data).sft)))
    converted = tmp_path / "run" / "sft" / "data" / f"{trainargs.DATASET}.jsonl"
    assert len(converted.read_text().splitlines()) == rows == 24
    assert not (tmp_path / "run" / "data").exists()
