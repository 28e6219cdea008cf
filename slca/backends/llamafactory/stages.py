"""The LLaMA-Factory backend's pipeline stage: SFT by `llamafactory-cli train`.

The stage converts the SFT split to LLaMA-Factory's sharegpt layout (with its dataset_info.json),
writes the train YAML and DeepSpeed config, runs the command from LLaMA-Factory's own environment
and records its loss curve in metrics.jsonl. Its `model_dir` (LLaMA-Factory's output directory) is
the starting model of the RL stage; under `slca run --dry-run` it stops after printing the command.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml

from slca.backends.llamafactory import runner, template, trainargs
from slca.fileio import atomic_write_json, atomic_write_text
from slca.runcontext import DryRunStop, RunContext, RunError, StageInputError
from slca.stage_results import SftResult

# HF Trainer's count of the examples it trains on, after LLaMA-Factory's loader dropped any.
_NUM_EXAMPLES = re.compile(r"Num examples = ([\d,]+)")


def _convert(ctx: RunContext, dataset_dir: Path) -> dict[str, Any]:
    """The SFT split in LLaMA-Factory's sharegpt layout, registered in dataset_dir/dataset_info.json."""
    from slca.data.convert import convert_file
    from slca.data.errors import DataInputError
    from slca.data.schemas import DataValidationError

    source = ctx.split_path("sft")
    try:
        report = convert_file(source, dataset_dir / f"{trainargs.DATASET}.jsonl", dataset_name=trainargs.DATASET)
    except (DataInputError, DataValidationError) as exc:
        raise StageInputError(f"{source} (SFT split, converted for LLaMA-Factory): {exc}") from None
    return report.as_dict()


def _start_model(ctx: RunContext) -> str:
    """The model LLaMA-Factory starts from: the backbone's own when its template has a LLaMA-Factory
    twin, else a copy carrying the template it trains with (see slca.backends.llamafactory.template)."""
    from transformers.utils import logging as hf_logging

    from slca.models.backbones import template_family
    from slca.models.run_weights import base_model_dir

    hf_logging.disable_progress_bar()  # keep the run's output to the stage's own lines
    model = base_model_dir(ctx)
    if template_family(ctx.spec.backbone) is not None:
        return model
    return str(template.with_template(Path(model), ctx.stage_dir("sft") / "base_model", template.qwen_tools_template()).resolve())


def _deepspeed(ctx: RunContext) -> Path | None:
    choice = ctx.spec.backend.deepspeed
    if choice is None:
        return None
    if trainargs.is_preset(choice):
        return atomic_write_json(ctx.stage_dir("sft") / "deepspeed.json", trainargs.deepspeed_config(choice)).resolve()
    path = Path(choice)
    if not path.is_file():
        raise RunError(f"backend.deepspeed: neither a preset (ds_z2, ds_z3) nor a file: {choice}")
    return path.resolve()


def prepare(ctx: RunContext) -> tuple[list[str], dict[str, str], dict[str, Any], Path]:
    """Write everything LLaMA-Factory reads; (argv, extra env, conversion counts, output dir)."""
    spec = ctx.spec
    out = ctx.stage_dir("sft")
    lf_template = template.lf_template(spec)
    converted = _convert(ctx, out / "data")
    paths = trainargs.Paths(
        model=_start_model(ctx),
        dataset_dir=(out / "data").resolve(),
        output_dir=(out / "model").resolve(),
        deepspeed=_deepspeed(ctx),
    )
    yaml_path = atomic_write_text(out / "train.yaml", yaml.safe_dump(trainargs.train_args(spec, paths, lf_template), sort_keys=False))
    executable = str(Path(spec.backend.executable).expanduser().resolve())
    argv, env = trainargs.command(spec, executable, yaml_path.resolve())
    return argv, env, converted, paths.output_dir


def sft_stage(ctx: RunContext) -> SftResult:
    """Supervised warm-start by LLaMA-Factory; resumes from its newest checkpoint in sft/model."""
    spec = ctx.spec
    executable = Path(spec.backend.executable).expanduser().resolve()
    if not ctx.dry_run and not os.access(executable, os.X_OK):
        raise RunError(f"backend.executable: no llamafactory-cli at {executable}; build LLaMA-Factory's environment with `make llamafactory-env`")
    argv, env, converted, output_dir = prepare(ctx)
    line = trainargs.shell_line(argv, env)
    print(f"[sft] command: {line}")
    if ctx.dry_run:
        raise DryRunStop(f"dry run: wrote {ctx.stage_dir('sft')}; train with: {line}")
    log_path = (ctx.stage_dir("sft") / "llamafactory.log").resolve()
    runner.run_streamed(argv, env, log_path, cwd=ctx.stage_dir("sft"))
    steps = 0
    last: dict[str, float] = {}
    for steps, metrics in runner.loss_curve(output_dir):
        ctx.tracker.log(metrics, step=steps, stage="sft")
        last = metrics
    counted = _NUM_EXAMPLES.findall(log_path.read_text(encoding="utf-8", errors="replace"))
    details: dict[str, Any] = {
        "template": template.lf_template(spec),
        "rows": converted["rows_out"],
        "dropped_texts": converted["dropped_texts"],
        "examples_trained": int(counted[-1].replace(",", "")) if counted else None,
        "steps": steps,
        "final_loss": last.get("loss"),
        "log": ctx.relative(log_path),
        "command": line,
    }
    details.update({f"lf/{k}": v for k, v in runner.train_summary(output_dir).items()})
    return SftResult(model_dir=ctx.relative(output_dir), details=details)

