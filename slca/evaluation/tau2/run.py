"""`tau2` benchmark: τ²-bench's retail and telecom domains with the evaluated policy as the agent (docs/tau2.md).

Per protocol cell and seed, slca serves the policy through slca.evaluation.tau2.server (the cell
decides how prompts are built) and runs τ² once per domain in its own environment
(slca.evaluation.tau2.driver, started as a subprocess); the user simulator and the judge are the
LLMs `eval.tau2` names. `eval.limit` caps the tasks taken from each domain (the first ones).
Metrics per seed: `<domain>/pass^k` for k = 1..eval.tau2.trials, `<domain>/errors` (share of
simulations that raised) and `pass^1`, the mean of the evaluated domains' pass^1.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from slca.config.tau2 import DOMAINS
from slca.evaluation.benchmarks import BENCHMARKS, BenchmarkDataError, BenchmarkInputs, DataRef, Scoring
from slca.evaluation.harness import CellResult, ProtocolCell, SeedRun, nan_mean, run_grid
from slca.evaluation.tau2.job import DATA_DIR, Tau2Error, domain_metrics, env_python, job_spec, run_driver
from slca.evaluation.tau2.server import PolicyServer, Protocol, serve_policy

HEADLINE = ("pass^1", *(f"{d}/pass^1" for d in DOMAINS), *(f"{d}/errors" for d in DOMAINS))
SERVED_NAME = "slca-policy"


def domain_files(domain: str) -> list[Path]:
    """The vendored files a domain's run reads (tasks, database, policies), sorted."""
    root = DATA_DIR / "tau2" / "domains" / domain
    return sorted(p for p in root.iterdir() if p.is_file())


def task_count(domain: str) -> int:
    path = DATA_DIR / "tau2" / "domains" / domain / "tasks.json"
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BenchmarkDataError(f"eval.benchmark=tau2: {path}: unreadable ({type(exc).__name__})") from None
    if not isinstance(tasks, list) or not tasks:
        raise BenchmarkDataError(f"eval.benchmark=tau2: {path}: expected a non-empty list of tasks")
    return len(tasks)


def check_driver(proc: Any, domain: str, out: Path) -> dict[str, Any]:
    """The driver's result for `domain`, or Tau2Error with the last line it printed."""
    if proc.returncode != 0 or not out.is_file():
        lines = [ln for ln in (proc.stderr or "").splitlines() if ln.strip()]
        raise Tau2Error(f"τ² {domain} run failed (exit {proc.returncode}): {lines[-1] if lines else 'no output'}")
    return json.loads(out.read_text(encoding="utf-8"))


def seed_metrics(per_domain: dict[str, dict[str, float]], trials: int) -> dict[str, float]:
    """One seed's metrics: every headline key (NaN for a domain not evaluated) plus pass^k for k > 1."""
    metrics = {key: float("nan") for key in HEADLINE}
    for values in per_domain.values():
        metrics.update(values)
    metrics["pass^1"] = nan_mean([per_domain[d][f"{d}/pass^1"] for d in per_domain])
    for k in range(2, trials + 1):
        metrics[f"pass^{k}"] = nan_mean([per_domain[d][f"{d}/pass^{k}"] for d in per_domain])
    return metrics


def raised_note(failures: list[dict[str, Any]], ran: int) -> str:
    """How many of `ran` simulations raised and the first one's reason (its first line), as one phrase; "" when none did."""
    if not failures:
        return ""
    first = (str(failures[0]["error"]).strip().splitlines() or [""])[0]
    return f"{len(failures)} of {ran} τ² simulations raised, first: task {failures[0]['task_id']}: {first}"


class Tau2Benchmark:
    """The `tau2` entry of slca.evaluation.benchmarks.BENCHMARKS (its protocol in that module's docstring)."""

    headline = HEADLINE

    def data(self, inputs: BenchmarkInputs) -> DataRef:
        cfg = inputs.eval_cfg
        digest = hashlib.sha256()
        total = evaluated = 0
        for domain in cfg.tau2.domains:
            for path in domain_files(domain):
                digest.update(path.relative_to(DATA_DIR).as_posix().encode() + b"\0" + path.read_bytes())
            n = task_count(domain)
            total += n
            evaluated += min(n, cfg.limit) if cfg.limit else n
        return DataRef(str(DATA_DIR / "tau2" / "domains"), digest.hexdigest(), total, evaluated)

    def scoring(self, inputs: BenchmarkInputs) -> Scoring:
        cfg = inputs.eval_cfg.tau2
        reward = f"tau2 with nl assertions judged by {cfg.judge.model}" if cfg.nl_assertions else "tau2"
        return Scoring("tau2", reward, None, f"tau2 user simulator {cfg.user.model}")

    def preflight(self, cfg: Any) -> None:
        """Refuse what would make every simulation fail, before any model loads: no τ² environment, or a key
        variable named for the user simulator (or the judge) that is unset (litellm then calls no endpoint)."""
        env_python(cfg.tau2)
        roles = [("user", cfg.tau2.user, "user simulator")]
        if cfg.tau2.nl_assertions:
            roles.append(("judge", cfg.tau2.judge, "judge"))
        for key, llm, role in roles:
            if llm.api_key_env and not os.environ.get(llm.api_key_env):
                raise Tau2Error(f"eval.tau2.{key}.api_key_env: environment variable {llm.api_key_env} is not set, and τ²'s {role} "
                                f"{llm.model} needs its key (export it, or set eval.tau2.{key}.api_key_env=null for a server that takes none)")

    def evaluate(self, generator: Any, inputs: BenchmarkInputs) -> list[CellResult]:
        cfg = inputs.eval_cfg
        domains, timeout_s = cfg.tau2.domains, cfg.tau2.timeout_s
        python = env_python(cfg.tau2)
        runs = itertools.count()  # one file stem per (cell, seed) in the run's scratch folder

        def run_cell(cell: ProtocolCell, seed: int) -> SeedRun:
            stem = next(runs)
            protocol = Protocol(cell.construction, cell.thinking, cell.system_prompt, seed)
            policy = PolicyServer(generator, inputs.tokenizer, inputs.rollout_cfg, protocol, SERVED_NAME)
            outs, job_paths = {}, []
            with serve_policy(policy) as url:
                for domain in domains:
                    outs[domain] = work / f"{stem}-{domain}.json"
                    job = job_spec(cfg.tau2, domain=domain, mode="llm", seed=seed, out=outs[domain], agent_url=url,
                                   served_name=SERVED_NAME, temperature=cfg.temperature, limit=cfg.limit)
                    job_paths.append(work / f"{stem}-{domain}.job.json")
                    job_paths[-1].write_text(json.dumps(job), encoding="utf-8")
                proc = run_driver(python, job_paths, timeout_s=timeout_s, workdir=work)
            per_domain, ran, failures = {}, 0, []
            for domain, out in outs.items():
                result = check_driver(proc, domain, out)
                per_domain[domain] = domain_metrics(result, domain)
                failed = [s for s in result["simulations"] if s["error"]]
                ran += len(result["simulations"])
                failures += failed
                if failed:  # scored 0 and counted in <domain>/errors; the first reason is shown once
                    print(f"[eval] tau2 {domain}: {len(failed)} of {len(result['simulations'])} simulations raised, "
                          f"first: task {failed[0]['task_id']}: {failed[0]['error']}", flush=True)
            # A simulation that raised evaluated nothing: a cell of only those is empty, not a pass^1 of 0.
            return SeedRun(seed_metrics(per_domain, cfg.tau2.trials), ran - len(failures), raised_note(failures, ran))

        with tempfile.TemporaryDirectory(prefix="slca-tau2-") as tmp:
            work = Path(tmp)
            return run_grid(inputs, f"tau2 {', '.join(domains)}", run_cell)


__all__ = ["Tau2Benchmark", "Tau2Error"]

BENCHMARKS.register("tau2")(Tau2Benchmark())
