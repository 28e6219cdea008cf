"""SLURM jobs of a verl run rendered from the spec: the multi-node Ray + verl job and the vLLM services."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from slca.backends.verl.slurm import endpoint_file, render, service_job, services, verl_job
from slca.config.compose import compose_spec


def bash_syntax_ok(script: str, tmp_path: Path) -> None:
    path = tmp_path / "job.sbatch"
    path.write_text(script)
    out = subprocess.run([shutil.which("bash") or "/bin/bash", "-n", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_the_reference_run_renders_a_ray_job_on_four_nodes_of_eight_gpus(tmp_path):
    spec = compose_spec(["experiment=paper_slca", "launcher.partition=gpu", "launcher.setup=['source /opt/env.sh']"])
    run_dir = tmp_path / "runs" / "paper_slca"
    script = verl_job(spec, run_dir)
    bash_syntax_ok(script, tmp_path)
    assert "{{" not in script
    assert "#SBATCH --nodes=4" in script and "#SBATCH --gpus-per-node=8" in script and "#SBATCH --partition=gpu" in script
    assert "ray start --head" in script and "source /opt/env.sh" in script
    # The trainer waits for both services and gets their URLs as overrides of the saved spec.
    for service in services(spec):
        assert str(endpoint_file(run_dir, service)) in script
    assert re.search(r'slca run --here --spec \S*spec\.yaml "simulator\.base_url=\$url_0" "reward\.judge\.base_url=\$url_1"', script)


def test_each_service_job_serves_its_model_and_publishes_its_url_atomically(tmp_path):
    spec = compose_spec(["experiment=paper_slca"])
    found = {s.name: s for s in services(spec)}
    assert set(found) == {"sgls", "judge"}
    assert (found["sgls"].model, found["judge"].model) == (spec.simulator.model, spec.reward.judge.model)
    script = service_job(spec, tmp_path, found["judge"], gpus=8)
    bash_syntax_ok(script, tmp_path)
    assert f"vllm serve {spec.reward.judge.model}" in script and "--tensor-parallel-size 8" in script
    assert '--port "$port"' in script and f"port={found['judge'].port}" in script
    assert f"mv {endpoint_file(tmp_path, found['judge'])}.tmp {endpoint_file(tmp_path, found['judge'])}" in script


def test_an_offline_judge_and_schema_simulator_need_no_services():
    assert services(compose_spec(["experiment=verl_smoke"])) == []


def test_a_template_value_missing_or_left_over_is_refused():
    with pytest.raises(KeyError, match="missing \\['b'\\]"):
        render("{{a}} {{b}}", {"a": 1})
    with pytest.raises(KeyError, match="unused \\['c'\\]"):
        render("{{a}}", {"a": 1, "c": 2})


def test_a_slurm_job_needs_the_slurm_launcher(tmp_path):
    with pytest.raises(ValueError, match="launcher=slurm"):
        verl_job(compose_spec(["experiment=verl_smoke"]), tmp_path)
