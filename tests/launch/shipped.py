"""The shipped experiments (conf/experiment/) and the sbatch script `launcher=slurm` would submit for
each, rendered as the launcher renders it: the verl backend's Ray template, or submitit's own script
for the others. Shared by the fast check (`bash -n`, tests/config/test_shipped_specs.py) and SLURM's own
check on the test cluster (`sbatch --test-only`, tests/launch/test_shipped_sbatch.py)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from slca.config.compose import compose_spec, options
from slca.launch.snapshot import Snapshot

EXPERIMENTS = options("experiment")


def compose_shipped(names: list[str] | None = None) -> dict[str, Any]:
    """experiment name -> its composed, validated spec (one composition each)."""
    return {name: compose_spec([f"experiment={name}"]) for name in (EXPERIMENTS if names is None else names)}


def slurm_launched(specs: dict[str, Any]) -> list[str]:
    return [name for name, spec in specs.items() if spec.launcher.name == "slurm"]


def sbatch_script(spec: Any, launcher: Any, work: Path) -> str:
    """The batch script of `spec` as one job (array of one for verl) under `launcher`, its jobs running
    from a code snapshot under `work` (the lines SlurmLauncher.submit adds)."""
    import submitit

    from slca.launch.slurm import executor_parameters

    work.mkdir(parents=True, exist_ok=True)  # the job's working directory (verl's script names it)
    code = Snapshot(work / "code" / ("0" * 16), "0" * 64)
    launcher = launcher.model_copy(update={"setup": [*launcher.setup, *code.shell_lines()]})
    log_dir = work / "logs"
    if spec.backend.name == "verl":  # slca.launch.ray_job submits verl runs from this template
        from slca.backends.verl.slurm import verl_job

        return verl_job([(spec, work / "run")], launcher, name=spec.experiment, log_dir=log_dir, python=sys.executable, workdir=work)
    params = executor_parameters(launcher, spec.experiment)
    executor = submitit.AutoExecutor(folder=log_dir / "%j", cluster="slurm", slurm_max_num_timeout=params.pop("slurm_max_num_timeout"))
    executor.update_parameters(**params)
    command = " ".join([shlex.quote(sys.executable), "-u -m submitit.core._submit", shlex.quote(str(log_dir / "%j"))])
    # submitit's own renderer (what `executor.submit` writes before calling sbatch).
    return executor._executor._make_submission_file_text(command, "shipped")  # noqa: SLF001
