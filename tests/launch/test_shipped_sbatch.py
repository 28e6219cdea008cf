"""SLURM's own verdict on the batch script of every shipped experiment that launches on SLURM:
`sbatch --test-only` on the test cluster parses every directive and says when the job would start.

The shipped allocations (4 nodes of 8 GPUs for the paper's runs) cannot fit the one-node, two-GPU test
cluster, so each script is rendered with its allocation cut down to that node (nodes 1, at most 2 GPUs
and 2 CPUs, no memory request, the default partition); everything else is the shipped launcher's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.launch.shipped import EXPERIMENTS, compose_shipped, sbatch_script, slurm_launched

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def test_sbatch_test_only_accepts_the_script_of_every_shipped_experiment_that_launches_on_slurm(slurm_cluster: Path, tmp_path: Path) -> None:
    shipped = compose_shipped(EXPERIMENTS)
    names = slurm_launched(shipped)
    assert {"paper_slca", "paper_sft"} <= set(names)
    for name in names:
        spec = shipped[name]
        cut = spec.launcher.model_copy(update={"nodes": 1, "gpus_per_node": min(spec.launcher.gpus_per_node, 2),
                                               "cpus_per_task": min(spec.launcher.cpus_per_task, 2), "mem_gb": None, "partition": None})
        script = tmp_path / f"{name}.sbatch"
        script.write_text(sbatch_script(spec, cut, tmp_path / name))
        verdict = subprocess.run(["sbatch", "--test-only", str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        # sbatch --test-only answers on stderr: "sbatch: Job <id> to start at <time> using <n> processors on nodes <node> in partition debug".
        assert verdict.returncode == 0 and "to start at" in verdict.stderr, f"{name}: {verdict.stderr}"
