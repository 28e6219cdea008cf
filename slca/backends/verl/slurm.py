"""SLURM jobs for verl runs, filled from their specs: the Ray + verl job array that `launcher=slurm`
submits for every verl run (SLURM/verl_ray_job.sbatch), and the vLLM services behind the SGLS tool
simulator and the LLM summary judge (SLURM/vllm_service.sbatch). This module only renders them;
`slca.launch.slurm` submits the Ray job (docs/launch.md#verl-runs-on-slurm).

Nothing in a spec asks slca to start the services, so the trainer talks to the `base_url` its spec
names; the launcher writes the service scripts beside the run as artefacts. A service started from
one writes its base URL into a file under the run directory once it answers.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from slca.backends.verl.compose import CPU_RAY_CPUS
from slca.backends.verl.launch import verl_launch
from slca.config.spec import Spec

TEMPLATES = Path(__file__).resolve().parents[3] / "SLURM"
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


def render(template: str, values: dict[str, Any]) -> str:
    """`template` with every {{name}} replaced; a missing or an unused value is a KeyError naming it."""
    names = set(_PLACEHOLDER.findall(template))
    missing, unused = names - set(values), set(values) - names
    if missing or unused:
        raise KeyError(f"template placeholders missing {sorted(missing)}, unused {sorted(unused)}")
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)


@dataclass(frozen=True)
class Service:
    """One vLLM service a run needs: which spec field takes its URL, and what it serves."""

    name: str
    spec_field: str
    model: str
    port: int


def services(spec: Spec) -> list[Service]:
    """The services the spec talks to: the SGLS simulator and the LLM judge, when chosen."""
    found = []
    if spec.simulator.name == "sgls":
        found.append(Service("sgls", "simulator.base_url", spec.simulator.model, _port(spec.simulator.base_url)))
    if spec.reward.name == "hierr" and spec.reward.judge.name == "llm":
        found.append(Service("judge", "reward.judge.base_url", spec.reward.judge.model, _port(spec.reward.judge.base_url)))
    return found


def _port(url: str) -> int:
    match = re.search(r":(\d+)(?:/|$)", url)
    return int(match.group(1)) if match else 8000


def endpoint_file(run_dir: Path, service: Service) -> Path:
    return run_dir / "endpoints" / f"{service.name}.url"


def _sbatch_extra(launcher: Any) -> str:
    """The launcher's optional sbatch settings, as submitit passes them for other runs."""
    lines = [f"#SBATCH --{key}={value}" for key, value in (("partition", launcher.partition), ("account", launcher.account), ("qos", launcher.qos)) if value]
    if launcher.mem_gb:
        lines.append(f"#SBATCH --mem={launcher.mem_gb}G")
    lines += [f"#SBATCH --{key}={value}" for key, value in launcher.sbatch_extra.items()]
    return "\n".join(lines)


def _run_case(index: int, spec: Spec, run_dir: Path) -> str:
    """One `case` arm of the job array: the task's run directory, its Ray node resources, and the
    environment verl's processes need (given to `ray start`, whose workers inherit it)."""
    backend = spec.backend
    # On CPU the GPUs are slca's CPU platform's logical ones and the CPUs are logical too (compose.py).
    cpus = str(CPU_RAY_CPUS) if backend.device == "cpu" else '"$SLURM_CPUS_PER_TASK"'
    env = {**verl_launch(spec, run_dir / "rl").env}
    exports = " ".join(shlex.quote(f"{key}={value}") for key, value in env.items())
    return "\n".join([
        f"  {index})",
        f"    run_dir={shlex.quote(str(run_dir))}",
        f"    ray_cpus={cpus}",
        f"    ray_gpus={backend.n_gpus_per_node}",
        f"    ray_env=({exports})",
        "    ;;",
    ])


def verl_job(runs: Sequence[tuple[Spec, Path]], launcher: Any, *, name: str, log_dir: Path, python: str, workdir: Path) -> str:
    """The sbatch script running `runs` (spec, run directory) as one job array, task i for run i, at
    most `launcher.array_parallelism` at once. The allocation (nodes, GPUs, CPUs, time, partition,
    account, QoS, memory, extra parameters, setup lines) comes from `launcher` alone; each task runs
    `python -m slca.launch.job` with `python` (the submitting interpreter) in `workdir`."""
    if launcher.name != "slurm":
        raise ValueError("launcher.name: a SLURM job needs launcher=slurm")
    if not runs:
        raise ValueError("a job array needs at least one run")
    log = shlex.quote(str(log_dir))
    return render(
        (TEMPLATES / "verl_ray_job.sbatch").read_text(encoding="utf-8"),
        {
            "job_name": name,
            "array": f"0-{len(runs) - 1}%{launcher.array_parallelism}",
            "nodes": launcher.nodes,
            "cpus_per_task": launcher.cpus_per_task,
            "time_min": launcher.time_min,
            "log_dir": log,
            "workdir": shlex.quote(str(workdir)),
            "signal_delay_s": launcher.signal_delay_s,
            "max_num_timeout": launcher.max_num_timeout,
            # No GPU line for gpus_per_node=0 (a CPU run), as submitit leaves it out.
            "sbatch_extra": "\n".join(filter(None, [f"#SBATCH --gpus-per-node={launcher.gpus_per_node}" if launcher.gpus_per_node else "", _sbatch_extra(launcher)])),
            "setup": "\n".join(launcher.setup),
            "python": shlex.quote(python),
            "runs": "\n".join(_run_case(i, spec, run_dir) for i, (spec, run_dir) in enumerate(runs)),
        },
    )


def service_job(spec: Spec, run_dir: Path, service: Service, gpus: int) -> str:
    """The sbatch script serving `service` with `vllm serve` on one node of `gpus` GPUs."""
    launcher = spec.launcher
    return render(
        (TEMPLATES / "vllm_service.sbatch").read_text(encoding="utf-8"),
        {
            "job_name": f"{spec.experiment}-{service.name}",
            "cpus_per_task": launcher.cpus_per_task,
            "time_min": launcher.time_min,
            "log_dir": shlex.quote(str(run_dir / "logs")),
            "sbatch_extra": _sbatch_extra(launcher),
            "setup": "\n".join(launcher.setup),
            "gpus": gpus,
            "port": service.port,
            "model": shlex.quote(service.model),
            "served_name": shlex.quote(service.model),
            "endpoint_file": shlex.quote(str(endpoint_file(run_dir, service))),
        },
    )
