"""`lm_eval` benchmark: general capabilities of a saved model through lm-evaluation-harness (the efficiency paper's Table 5).

The harness loads the model directory itself (its `hf` model, or `vllm` when eval.generator is
vllm), builds each task's prompts and scores them with its own metrics; slca runs it in a subprocess
(slca.evaluation.lmeval.driver) with HF_HUB_OFFLINE and HF_DATASETS_OFFLINE set unless
eval.lm_eval.offline is false, so a task whose data is not on this machine fails at once instead of
waiting on the network. Before anything is scored the driver describes the tasks (leaf tasks, their
versions, document counts and a sha256 of their documents) for the protocol card.

Per seed (the harness's random, numpy, torch and few-shot seeds) the metrics are
`<task>/<metric>` and `<task>/<metric>_stderr` (the harness's own standard error) for each
configured task, plus `rows` (documents scored) and `skipped_rows` (0). eval.limit caps the
documents of each task.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from slca.config.groups.eval import EvalConfig
from slca.evaluation.benchmarks import BENCHMARKS, BenchmarkInputs, DataRef, Scoring
from slca.evaluation.harness import CellResult, ProtocolCell, SeedRun, run_grid
from slca.runcontext import RunError

SHIPPED_TASKS = Path(__file__).resolve().parent / "tasks"
DRIVER_MODULE = "slca.evaluation.lmeval.driver"
# eval.generator -> the harness's model type that loads the same directory.
HARNESS_MODELS = {"hf": "hf", "vllm": "vllm"}


class LmEvalError(RunError):
    """The harness could not run or returned no usable number; str() is the one-line message for the user."""


def harness_version() -> str:
    try:
        return importlib.metadata.version("lm_eval")
    except importlib.metadata.PackageNotFoundError:
        raise LmEvalError("eval.benchmark=lm_eval: lm-evaluation-harness is not installed (pip install lm-eval==0.4.13)") from None


def include_paths(cfg: EvalConfig) -> list[str]:
    """slca's shipped task folder, then eval.lm_eval.include_path."""
    paths = [str(SHIPPED_TASKS)]
    if cfg.lm_eval.include_path:
        paths.append(str(Path(cfg.lm_eval.include_path).resolve()))
    return paths


def harness_env(offline: bool) -> dict[str, str]:
    """The driver's environment: this one, with the hub closed unless eval.lm_eval.offline is false."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")}
    if offline:
        env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return env


def run_driver(job: dict[str, Any], cfg: EvalConfig, work: Path) -> dict[str, Any]:
    """Run the driver on one job in a subprocess; its JSON answer, or LmEvalError with its last line."""
    job_path = work / f"{job['mode']}-{job.get('seed', 0)}.job.json"
    out = work / f"{job['mode']}-{job.get('seed', 0)}.out.json"
    job_path.write_text(json.dumps({**job, "out": str(out)}), encoding="utf-8")
    timeout_s = cfg.lm_eval.timeout_s
    try:
        proc = subprocess.run([sys.executable, "-m", DRIVER_MODULE, str(job_path)], cwd=work, env=harness_env(cfg.lm_eval.offline),
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise LmEvalError(f"eval.lm_eval.timeout_s: the harness did not finish its {job['mode']} run within {timeout_s:g} s") from None
    if proc.returncode != 0 or not out.is_file():
        lines = [ln for ln in (proc.stderr or "").splitlines() if ln.strip()]
        last = lines[-1] if lines else "no output"
        hint = (" (eval.lm_eval.offline=true reads task data only from the local Hugging Face cache: fetch it once with "
                "eval.lm_eval.offline=false where the hub is reachable)") if cfg.lm_eval.offline and "Hub" in last else ""
        raise LmEvalError(f"lm-evaluation-harness {job['mode']} run failed (exit {proc.returncode}): {last}{hint}")
    return json.loads(out.read_text(encoding="utf-8"))


def base_job(cfg: EvalConfig, mode: str) -> dict[str, Any]:
    return {"mode": mode, "tasks": [t.name for t in cfg.lm_eval.tasks], "include_paths": include_paths(cfg),
            "num_fewshot": cfg.lm_eval.num_fewshot, "limit": cfg.limit}


def describe(cfg: EvalConfig) -> dict[str, Any]:
    """The driver's description of the configured tasks (leaf tasks with version, document count, sha256)."""
    with tempfile.TemporaryDirectory(prefix="slca-lm-eval-") as tmp:
        return run_driver(base_job(cfg, "describe"), cfg, Path(tmp))


def _number(value: Any) -> float:
    """A harness value as a float; its "N/A" (no stderr computed) and anything non-numeric is NaN."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return float("nan")
    return number if math.isfinite(number) else float("nan")


def seed_metrics(result: dict[str, Any], cfg: EvalConfig) -> dict[str, float]:
    """One seed's metrics from the harness's result: each task's headline metric and its stderr, rows scored."""
    metrics: dict[str, float] = {}
    for task in cfg.lm_eval.tasks:
        row = result.get("results", {}).get(task.name)
        if row is None:
            raise LmEvalError(f"eval.lm_eval.tasks: the harness returned no result for {task.name!r}")
        key = f"{task.metric},none"
        if key not in row:
            known = sorted({k.split(",")[0] for k in row if "," in k and "_stderr" not in k})
            raise LmEvalError(f"eval.lm_eval.tasks: {task.name} reports no metric {task.metric!r}; it reports {', '.join(known) or 'none'}")
        metrics[f"{task.name}/{task.metric}"] = _number(row[key])
        metrics[f"{task.name}/{task.metric}_stderr"] = _number(row.get(f"{task.metric}_stderr,none"))
    scored = sum(int(n.get("effective", 0)) for n in result.get("n-samples", {}).values())
    metrics["rows"] = float(scored)
    metrics["skipped_rows"] = 0.0
    return metrics


class LmEvalBenchmark:
    """The `lm_eval` entry of slca.evaluation.benchmarks.BENCHMARKS (its protocol in that module's docstring).

    It loads the model from the directory itself, so the eval stage builds no generator for it."""

    headline: tuple[str, ...] = ()
    loads_model_itself = True

    def headline_for(self, cfg: EvalConfig) -> tuple[str, ...]:
        return tuple(name for t in cfg.lm_eval.tasks for name in (f"{t.name}/{t.metric}", f"{t.name}/{t.metric}_stderr"))

    def preflight(self, cfg: EvalConfig) -> None:
        """Refuse, before any model loads, a harness that is not installed or an include_path that is not there."""
        harness_version()
        if importlib.util.find_spec("lm_eval") is None:
            raise LmEvalError("eval.benchmark=lm_eval: the lm_eval package cannot be imported (pip install lm-eval==0.4.13)")
        if cfg.lm_eval.include_path and not Path(cfg.lm_eval.include_path).is_dir():
            raise LmEvalError(f"eval.lm_eval.include_path: not a directory: {cfg.lm_eval.include_path}")

    def data(self, inputs: BenchmarkInputs) -> DataRef:
        described = describe(inputs.eval_cfg)
        digest = hashlib.sha256()
        versions: dict[str, str] = {}
        total = evaluated = 0
        limit = inputs.eval_cfg.limit
        for leaf in described["leaves"]:
            digest.update(f"{leaf['name']}\0{leaf['version']}\0{leaf['sha256']}\0".encode())
            versions[leaf["name"]] = str(leaf["version"])
            total += leaf["docs"]
            evaluated += min(leaf["docs"], limit) if limit else leaf["docs"]
        names = ", ".join(t.name for t in inputs.eval_cfg.lm_eval.tasks)
        return DataRef(f"lm-evaluation-harness tasks: {names}", digest.hexdigest(), total, evaluated, versions)

    def scoring(self, inputs: BenchmarkInputs) -> Scoring:
        cfg = inputs.eval_cfg.lm_eval
        shots = "each task's default few-shot" if cfg.num_fewshot is None else f"{cfg.num_fewshot}-shot"
        metrics = ", ".join(f"{t.name} {t.metric}" for t in cfg.tasks)
        return Scoring("lm_eval", f"lm-evaluation-harness {harness_version()} ({shots}): {metrics}", None,
                       "none: the harness scores each answer's log-likelihood, no tool is called")

    def evaluate(self, generator: Any, inputs: BenchmarkInputs) -> list[CellResult]:
        cfg = inputs.eval_cfg
        job = {**base_job(cfg, "evaluate"), "model": HARNESS_MODELS[cfg.generator], "device": inputs.device, "batch_size": cfg.lm_eval.batch_size}
        model_dir = inputs.model_dir
        if model_dir is None or not Path(model_dir).is_dir():
            raise LmEvalError(f"eval.benchmark=lm_eval scores a saved model directory, not {model_dir or 'a policy in memory'} "
                              "(evaluate the run afterwards with slca eval --from RUN eval.benchmark=lm_eval)")
        job["model_dir"] = str(Path(model_dir).resolve())

        def run_cell(cell: ProtocolCell, seed: int) -> SeedRun:
            metrics = seed_metrics(run_driver({**job, "seed": seed}, cfg, work), cfg)
            return SeedRun(metrics, int(metrics["rows"]), "" if metrics["rows"] else "the harness scored no document")

        with tempfile.TemporaryDirectory(prefix="slca-lm-eval-") as tmp:
            work = Path(tmp)
            return run_grid(inputs, f"lm_eval {', '.join(t.name for t in cfg.lm_eval.tasks)}", run_cell)


BENCHMARKS.register("lm_eval")(LmEvalBenchmark())
