"""What slca hands τ²'s driver, and what it reads back (docs/tau2.md#how-it-runs).

`job_spec` turns `eval.tau2` plus one (domain, seed, served policy) into the JSON job the driver
reads; `pass_hat_k` and `domain_metrics` reduce the driver's per-simulation rewards to τ²'s
pass^k (the probability that k i.i.d. trials of a task all succeed, averaged over tasks).
"""

from __future__ import annotations

import math
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from slca.config.codebase import checkout_root
from slca.config.tau2 import Tau2Eval, Tau2Llm
from slca.runcontext import RunError

ROOT = checkout_root()  # the vendored tree and τ²'s environment stay in the checkout when a job runs from a code snapshot
VENDORED = ROOT / "third_party" / "tau2-bench"
DATA_DIR = VENDORED / "data"
DRIVER = Path(__file__).resolve().parent / "driver.py"
MODES = ("llm", "gold", "gold_drop_last")


class Tau2Error(RunError):
    """τ² could not run; str() is the one-line message for the user."""


def llm_spec(llm: Tau2Llm, max_tokens: int | None = None) -> dict[str, Any]:
    return {"model": llm.model, "base_url": llm.base_url, "api_key_env": llm.api_key_env, "temperature": llm.temperature,
            "max_tokens": max_tokens}


def job_spec(cfg: Tau2Eval, *, domain: str, mode: str, seed: int, out: Path, agent_url: str | None = None,
             served_name: str = "policy", temperature: float = 0.0, limit: int | None = None,
             task_ids: Sequence[str] | None = None) -> dict[str, Any]:
    """The driver's job for one τ² run (one domain, one seed): every `eval.tau2` knob τ² itself reads."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    agent = None
    if agent_url is not None:
        # The agent is slca's own server: litellm's `openai/` provider with its base URL.
        agent = {"model": f"openai/{served_name}", "base_url": agent_url, "api_key_env": None, "temperature": temperature,
                 "max_tokens": None}
    return {
        "domain": domain, "mode": mode, "seed": seed, "trials": cfg.trials, "max_steps": cfg.max_steps,
        "max_errors": cfg.max_errors, "max_concurrency": cfg.max_concurrency, "limit": limit,
        "task_ids": list(task_ids) if task_ids is not None else None,
        "agent": agent, "user": llm_spec(cfg.user),
        "judge": llm_spec(cfg.judge) if cfg.nl_assertions else None,
        "out": str(out),
    }


def env_python(cfg: Tau2Eval) -> Path:
    """The interpreter of τ²'s environment; Tau2Error naming the build command when it is missing."""
    env = Path(cfg.env_dir)
    env = env if env.is_absolute() else ROOT / env
    python = env / "bin" / "python"
    if not python.is_file():
        raise Tau2Error(f"eval.tau2.env_dir: no τ² environment at {env} (build it with `make tau2-env`, docs/tau2.md#setup)")
    return python


def run_driver(python: Path, job_paths: Sequence[Path], *, timeout_s: float, workdir: Path) -> subprocess.CompletedProcess[str]:
    """Run the driver on job files (in order, one process) in τ²'s environment; its data comes from the vendored tree."""
    # τ²'s and litellm's own environment knobs are not inherited: the job file says everything.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAU2_", "LITELLM_"))}
    env["TAU2_DATA_DIR"] = str(DATA_DIR)
    # litellm fetches its price table from GitHub at import unless told to use its bundled copy.
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    try:
        return subprocess.run([str(python), str(DRIVER), *map(str, job_paths)], cwd=workdir, env=env, capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise Tau2Error(f"eval.tau2.timeout_s: τ² did not finish {[p.name for p in job_paths]} within {timeout_s:g} s") from None


def is_success(reward: float) -> bool:
    """τ²'s own rule: a simulation succeeds when its reward is 1 (to within 1e-6)."""
    return abs(float(reward) - 1.0) <= 1e-6


def pass_hat_k(successes: int, trials: int, k: int) -> float:
    """pass^k of one task: C(successes, k) / C(trials, k), the chance that k of its trials drawn without replacement all succeed."""
    if not 1 <= k <= trials or not 0 <= successes <= trials:
        raise ValueError(f"pass^k needs 1 <= k <= trials and 0 <= successes <= trials, got k={k}, {successes}/{trials}")
    return math.comb(successes, k) / math.comb(trials, k)


def domain_metrics(result: Mapping[str, Any], domain: str) -> dict[str, float]:
    """`<domain>/pass^k` for k = 1..trials (mean over tasks) and `<domain>/errors` (share of simulations that raised)."""
    trials = int(result["trials"])
    sims = result["simulations"]
    wins: dict[str, int] = {task: 0 for task in result["task_ids"]}
    runs: dict[str, int] = {task: 0 for task in result["task_ids"]}
    for sim in sims:
        runs[sim["task_id"]] += 1
        wins[sim["task_id"]] += int(is_success(sim["reward"]))
    if any(n != trials for n in runs.values()):
        raise Tau2Error(f"τ² {domain}: expected {trials} trials of every task, got {sorted(set(runs.values()))}")
    out = {f"{domain}/pass^{k}": sum(pass_hat_k(wins[t], trials, k) for t in wins) / len(wins) for k in range(1, trials + 1)}
    out[f"{domain}/errors"] = sum(1 for s in sims if s.get("error")) / len(sims)
    return out
