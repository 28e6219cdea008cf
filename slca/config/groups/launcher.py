"""`launcher` group: where the run executes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from slca.config.base import SlcaModel
from slca.config.limits import MAX_GPUS_PER_NODE, MAX_NODES, MAX_WORKERS
from slca.config.options import Options


LAUNCHER_OPTIONS = Options("launcher")


@LAUNCHER_OPTIONS.add
class LocalLauncher(SlcaModel):
    """Run on this machine: a single run in this process, a sweep's runs in subprocesses."""

    name: Literal["local"] = Field("local", description="Option name.")
    parallel: int = Field(1, ge=1, le=64, description="Sweep runs at once, each a subprocess (1: one after another; torch runs thrash a small machine).")


@LAUNCHER_OPTIONS.add
class SlurmLauncher(SlcaModel):
    """Submit through submitit to a SLURM cluster."""

    name: Literal["slurm"] = Field("slurm", description="Option name.")
    partition: str | None = Field(None, description="SLURM partition.")
    nodes: int = Field(1, ge=1, le=MAX_NODES, description="Nodes per job.")
    gpus_per_node: int = Field(8, ge=0, le=MAX_GPUS_PER_NODE, description="GPUs per node.")
    cpus_per_task: int = Field(16, ge=1, le=MAX_WORKERS, description="CPUs per task.")
    # Caps above any SLURM node or partition: 64 TiB of memory, a year of wall time, 10,000 array tasks.
    mem_gb: int | None = Field(None, ge=1, le=2**16, description="Memory per node in GiB; null takes the partition default.")
    time_min: int = Field(24 * 60, ge=1, le=366 * 24 * 60, description="Wall-time limit in minutes.")
    account: str | None = Field(None, description="SLURM account.")
    qos: str | None = Field(None, description="SLURM QoS.")
    setup: list[str] = Field(default_factory=list, description="Shell lines run before the job (module loads, env activation).")
    array_parallelism: int = Field(16, ge=1, le=10_000, description="Array tasks running at once in sweeps.")
    sbatch_extra: dict[str, str] = Field(default_factory=dict, description="Extra sbatch parameters, name: value (e.g. constraint: a100).")
    signal_delay_s: int = Field(120, ge=0, le=3600, description="Seconds before the time limit when SLURM signals the job to checkpoint and requeue.")
    max_num_timeout: int = Field(3, ge=0, le=100, description="Times a job that reaches its time limit is requeued before it counts as failed.")


def drop_other_launchers_fields(launcher: object) -> object:
    """A composed `launcher` block without the keys that only other launchers define.

    Launcher fields are launcher-specific: an experiment written for SLURM (nodes, partition, ...)
    still runs with `launcher=local`. A key that no launcher defines stays, so a misspelt one is
    still refused naming its path."""
    if not isinstance(launcher, dict):
        return launcher
    options = {model.model_fields["name"].default: model for model in LAUNCHER_OPTIONS.models()}
    chosen = options.get(launcher.get("name"))
    if chosen is None:
        return launcher
    others = {key for model in options.values() if model is not chosen for key in model.model_fields}
    return {key: value for key, value in launcher.items() if key in chosen.model_fields or key not in others}


# The union is built from the registered options when first imported (slca/config/options.py).
__getattr__ = LAUNCHER_OPTIONS.module_getattr(__name__, "LauncherConfig")
