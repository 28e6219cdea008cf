"""The verl backend's pipeline stages: `rl` composes the verl config, launches verl's own trainer
on it with slca's plugins, copies verl's per-step metrics into the run's tracker and exports the
final actor as a Hugging Face model directory; `dry_run` stops after writing the config and
printing the launch command.

On `backend.device=cpu` the SFT warm-up runs on the embedded trainer (`sft`), so a verl spec can be
debugged end to end on one machine; on GPUs SFT belongs to the LLaMA-Factory backend.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from slca.backends.verl.compose import TOOL_CONFIG_NAME, VerlInputs, check_verl_config, compose_verl_config, tool_config, verl_import_chatter_muted
from slca.backends.verl.launch import CONFIG_NAME, Launch, verl_launch
from slca.backends.verl.version import require_verl
from slca.config.spec import Spec
from slca.fileio import atomic_write_json, atomic_write_text
from slca.models.backbones import backbone_dir
from slca.runcontext import RunContext, RunError, StageUnavailable, resolve_run_dir
from slca.stage_results import RlResult, StageResult
from slca.signals import wait_child


def _data_files(spec: Spec) -> tuple[str, str]:
    """The RL and eval splits (verl-native parquet rows): the Toucan files, or the synthetic set
    (generated into its cache on first use, deterministic)."""
    if spec.data.name == "synthetic":
        from slca.data.synth import ensure_synthetic

        paths = ensure_synthetic(spec.data)
        return str(Path(paths.rl).resolve()), str(Path(paths.eval).resolve())
    return str(Path(spec.data.rl_path).resolve()), str(Path(spec.data.eval_path).resolve())


def _model_path(spec: Spec) -> str:
    """The policy verl starts from: the backbone's model directory (built on the synthetic SFT split
    when its kind builds, cached), or its hub id."""
    from slca.data.io import read_rows
    from slca.data.synth import ensure_synthetic

    return backbone_dir(spec.backbone, lambda: read_rows(ensure_synthetic(spec.data).sft))


def composed_config(spec: Spec, run_dir: Path, model_path: str, train_file: str, val_file: str) -> Any:
    """The checked verl config of `spec` for a run in `run_dir`; writes nothing."""
    require_verl()
    # RAY_ADDRESS is Ray's own: inside SLURM's Ray job, verl's ray.init joins that cluster.
    inputs = VerlInputs(model_path, train_file, val_file, run_dir.resolve(), run_dir.resolve() / "spec.yaml", os.environ.get("RAY_ADDRESS") or None)
    with verl_import_chatter_muted():
        cfg = compose_verl_config(spec, inputs)
        check_verl_config(cfg)
    return cfg


def write_verl_config(spec: Spec, run_dir: Path, cfg: Any) -> tuple[Path, Launch]:
    """Save `cfg` as `run_dir/rl/verl_config.yaml` and the spec's tool config beside it (the tools
    first: the config names them); returns (the config's path, the launch that runs it)."""
    import yaml
    from omegaconf import OmegaConf

    stage_dir = run_dir.resolve() / "rl"
    atomic_write_text(stage_dir / TOOL_CONFIG_NAME, yaml.safe_dump(tool_config(spec), sort_keys=False))
    path = atomic_write_text(stage_dir / f"{CONFIG_NAME}.yaml", OmegaConf.to_yaml(cfg))
    return Path(path), verl_launch(spec, stage_dir)


def dry_run(spec: Spec, open_run_dir: Callable[..., Any], argv: list[str] | None = None) -> int:
    """`slca run --dry-run`: the run directory gets spec.yaml, provenance and the composed verl
    config; the launch command is printed; nothing trains. A spec or config verl would refuse
    is refused before the run directory is touched. `open_run_dir` is the pipeline's (the CLI
    passes it: a backend never imports the pipeline)."""
    require_verl()
    run_dir = resolve_run_dir(spec)
    # With SFT in the run, verl starts from the SFT stage's model (where that stage writes it).
    model = str((run_dir / "sft" / "model").resolve()) if "sft" in spec.run.stages else _model_path(spec)
    cfg = composed_config(spec, run_dir, model, *_data_files(spec))
    with open_run_dir(spec, argv=argv) as (spec, run_dir, _):
        path, launch = write_verl_config(spec, run_dir, cfg)
    print(f"slca: verl config written to {path}")
    print(launch.shell())
    return 0


def sft_stage(ctx: RunContext) -> StageResult:
    """SFT warm-up on the embedded trainer (CPU only: on GPUs SFT is LLaMA-Factory's): the local
    backend's registered stage, asked through the backend registry (a backend imports no other)."""
    from slca.backends.contract import get_backend
    from slca.config.groups.backend import LocalBackend

    if ctx.spec.backend.device != "cpu":
        raise StageUnavailable("stage 'sft' runs on backend=verl only with backend.device=cpu; on GPUs use backend=llamafactory for SFT")
    local = ctx.spec.model_copy(update={"backend": LocalBackend(device="cpu")})
    return get_backend("local").stage("sft")(RunContext(local, ctx.run_dir, ctx.tracker, ctx.results, ctx.evaluate))


# An exception's name (OutOfMemoryError, RuntimeError, ...) or Ray's and the kernel's words for a killed worker.
_ERROR_LINE = re.compile(r"[A-Za-z](Error|Exception)\b|running low on memory|out of memory|\bKilled\b")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def last_error_line(log_path: Path, tail_bytes: int = 1 << 16) -> str:
    """The last line in the tail of verl's log that names an error (verl's exit status alone does not
    say that Ray ran out of memory), at most 300 characters; "" when none or the log is unreadable."""
    try:
        with open(log_path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - tail_bytes))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    found = [ln for ln in (" ".join(_ANSI.sub("", raw).split()) for raw in text.splitlines()) if _ERROR_LINE.search(ln)]
    return found[-1][:300] if found else ""


def rl_stage(ctx: RunContext) -> RlResult:
    """Launch verl on the composed config; resumes from verl's checkpoints in `rl/checkpoints`."""
    from slca.models.run_weights import policy_dir

    start = time.perf_counter()
    stage_dir = ctx.stage_dir("rl")
    cfg = composed_config(
        ctx.spec, ctx.run_dir, str(Path(policy_dir(ctx)).resolve()), str(ctx.split_path("rl").resolve()), str(ctx.split_path("eval").resolve())
    )
    config_path, launch = write_verl_config(ctx.spec, ctx.run_dir, cfg)
    log_path = stage_dir / "verl.log"
    keep_earlier_attempt(launch.metrics_file)
    print(f"slca: launching verl (log: {log_path})")
    with open(log_path, "ab") as log:
        # Interrupted or terminated meanwhile, verl is asked to stop too (its Ray driver shuts down on SIGTERM).
        code = wait_child(subprocess.Popen(launch.argv, env={**os.environ, **launch.env}, stdout=log, stderr=subprocess.STDOUT, cwd=stage_dir))
    if code != 0:
        cause = last_error_line(log_path)
        raise RunError(f"verl exited with status {code}" + (f" ({cause})" if cause else "") + f"; its output is in {log_path}")
    steps = _ingest_metrics(ctx, launch.metrics_file)
    checkpoint = latest_checkpoint(stage_dir / "checkpoints")
    model_dir = export_actor(checkpoint, stage_dir / "model", log_path)
    summary = {
        "model_dir": ctx.relative(model_dir),
        "checkpoint": ctx.relative(checkpoint),
        "steps_logged": steps,
        "verl_config": ctx.relative(config_path),
        "wall_s": time.perf_counter() - start,
    }
    atomic_write_json(stage_dir / "summary.json", summary)
    return RlResult(model_dir=summary.pop("model_dir"), details=summary)


def attempt_files(path: Path) -> list[Path]:
    """The metrics files of earlier verl launches in this stage, oldest first."""
    found = path.parent.glob(f"{path.stem}.attempt-*{path.suffix}")
    return sorted(found, key=lambda p: int(p.stem.rsplit("-", 1)[1]) if p.stem.rsplit("-", 1)[1].isdigit() else -1)


def keep_earlier_attempt(path: Path) -> None:
    """verl's file logger truncates its file when it starts: a launch that follows a killed or requeued
    one first moves that attempt's steps aside, so the steps it logged before its last checkpoint survive."""
    if path.exists() and path.stat().st_size > 0:
        path.rename(path.with_name(f"{path.stem}.attempt-{len(attempt_files(path)) + 1}{path.suffix}"))


def _ingest_metrics(ctx: RunContext, path: Path) -> list[int]:
    """verl's per-step metrics (its `file` logger) of every attempt into the run's metrics.jsonl, under
    verl's names, one record per step: a step an attempt logged again after resuming from an earlier
    checkpoint takes that later attempt's values (docs/launch.md#preemption-and-requeue)."""
    import json

    by_step: dict[int, dict[str, Any]] = {}
    for source in [*attempt_files(path), path]:
        if not source.exists():
            continue
        for line in source.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                by_step[int(record["step"])] = record["data"]
    ctx.tracker.rewind(lambda record: record.get("stage") == "rl")  # an ingestion cut short is redone whole
    for step in sorted(by_step):
        ctx.tracker.log(by_step[step], step=step, stage="rl")
    return sorted(by_step)


def latest_checkpoint(root: Path) -> Path:
    """verl's newest `global_step_N` folder (its `latest_checkpointed_iteration.txt` names N)."""
    marker = root / "latest_checkpointed_iteration.txt"
    if not marker.exists():
        raise RunError(f"verl wrote no checkpoint under {root}; set backend.save_freq so it saves at least once")
    return root / f"global_step_{int(marker.read_text().strip())}"


def export_actor(checkpoint: Path, target: Path, log_path: Path) -> Path:
    """The checkpoint's actor merged into a Hugging Face model directory by verl's own merger, in this
    process: verl is imported here already (the config was validated against its dataclasses), and a
    merger process would spend longer importing it again than merging a small model."""
    from contextlib import redirect_stderr, redirect_stdout

    from verl.model_merger.base_model_merger import ModelMergerConfig
    from verl.model_merger.fsdp_model_merger import FSDPModelMerger

    actor = checkpoint / "actor"
    # What `python -m verl.model_merger merge --backend fsdp` builds from its arguments.
    config = ModelMergerConfig(operation="merge", backend="fsdp", local_dir=str(actor), target_dir=str(target), hf_model_config_path=str(actor / "huggingface"))
    target.mkdir(parents=True, exist_ok=True)
    with open(log_path, "a", encoding="utf-8") as log, redirect_stdout(log), redirect_stderr(log):
        try:
            FSDPModelMerger(config).merge_and_save()
        except Exception as exc:  # noqa: BLE001 - verl's merger raises anything; the run gets one line
            raise RunError(f"exporting the verl actor {checkpoint} failed ({type(exc).__name__}: {exc}); see {log_path}") from exc
    return target

