"""SLURM jobs of verl runs rendered from their specs: the Ray + verl job array and the vLLM services.
The real submissions, the GRPO twin among them, are in tests/launch/test_verl_ray_jobs.py."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from slca.backends.verl.launch import verl_launch
from slca.backends.verl.slurm import endpoint_file, render, service_job, services, verl_job
from slca.config.compose import compose_spec
from tests.badinput import assert_refused, run_cli


def bash_syntax_ok(script: str, tmp_path: Path) -> None:
    path = tmp_path / "job.sbatch"
    path.write_text(script)
    out = subprocess.run([shutil.which("bash") or "/bin/bash", "-n", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def sbatch_lines(script: str) -> list[str]:
    """The #SBATCH directives sbatch reads: those before the first command."""
    lines = []
    for line in script.splitlines()[1:]:
        if line.startswith("#SBATCH "):
            lines.append(line.removeprefix("#SBATCH "))
        elif line.strip() and not line.startswith("#"):
            break
    return lines


def render_job(spec, runs: list[Path], tmp_path: Path) -> str:  # type: ignore[no-untyped-def]
    return verl_job([(spec, run) for run in runs], spec.launcher, name="main", log_dir=tmp_path / "logs", python=sys.executable, workdir=tmp_path)


def test_the_reference_run_renders_a_ray_job_array_on_four_nodes_of_eight_gpus_from_the_launcher_group(tmp_path):
    spec = compose_spec(["experiment=paper_slca", "launcher.partition=gpu", "launcher.account=rl", "launcher.qos=high", "launcher.mem_gb=512",
                         "launcher.time_min=600", "launcher.cpus_per_task=64", "launcher.array_parallelism=2", "+launcher.sbatch_extra={constraint: h100}",
                         "launcher.setup=['source /opt/env.sh']", "launcher.signal_delay_s=300", "launcher.max_num_timeout=5"])
    runs = [tmp_path / "runs" / "seed0", tmp_path / "runs" / "seed1", tmp_path / "runs" / "seed2"]
    script = render_job(spec, runs, tmp_path)
    bash_syntax_ok(script, tmp_path)
    assert "{{" not in script
    logs = tmp_path / "logs"
    assert sbatch_lines(script) == [
        "--job-name=main", "--array=0-2%2", "--nodes=4", "--ntasks-per-node=1", "--cpus-per-task=64", "--time=600",
        f"--output={logs}/ray-%A_%a.out", "--open-mode=append", f"--chdir={tmp_path}", "--requeue", "--signal=B:USR2@300",
        "--gpus-per-node=8", "--partition=gpu", "--account=rl", "--qos=high", "--mem=512G", "--constraint=h100",
    ]
    assert "source /opt/env.sh" in script and "((count < 5))" in script
    # A head on the first node, a worker on every other one, and the run on the head once all joined.
    head = re.search(r'srun --nodes=1 --ntasks=1 -w "\$head_node" env "\$\{ray_env\[@\]\}" "\$\{ray_start\[@\]\}" \\\n\s+--head ', script)
    worker = re.search(r'for \(\(i = 1; i < \$\{#nodes\[@\]\}; i\+\+\)\); do\n\s+srun --nodes=1 --ntasks=1 -w "\$\{nodes\[\$i\]\}" env "\$\{ray_env\[@\]\}" "\$\{ray_start\[@\]\}" --address="\$ray_address" &', script)
    assert head and worker and head.start() < worker.start()
    assert '"$python" - "$ray_address" "${#nodes[@]}" "$head"' in script
    run = script.index('srun --overlap --nodes=1 --ntasks=1 -w "$head_node" "$python" -m slca.launch.job "$run_dir" "$log" "$job" &')
    assert script.index('export RAY_ADDRESS="$ray_address"') < run and worker.start() < run
    # One case arm per run: its directory, GPU count, the allocation's CPUs and verl's environment.
    for index, run_dir in enumerate(runs):
        env = " ".join(shlex.quote(f"{k}={v}") for k, v in verl_launch(spec, run_dir / "rl").env.items())
        arm = f'  {index})\n    run_dir={run_dir}\n    ray_cpus="$SLURM_CPUS_PER_TASK"\n    ray_gpus=8\n    ray_env=({env})\n    ;;'
        assert arm in script
    # No service is started by slca: the trainer uses the spec's URLs as they are.
    assert "endpoints" not in script and "base_url" not in script


def test_a_cpu_run_asks_slurm_for_no_gpu_and_offers_ray_logical_gpus_and_cpus(tmp_path):
    spec = compose_spec(["experiment=verl_smoke", "launcher=slurm", "launcher.gpus_per_node=0", "launcher.cpus_per_task=2"])
    script = render_job(spec, [tmp_path / "run"], tmp_path)
    assert not any(line.startswith("--gpus-per-node") for line in sbatch_lines(script))
    assert "--array=0-0%16" in sbatch_lines(script) and "--nodes=1" in sbatch_lines(script)
    assert "    ray_cpus=16\n    ray_gpus=1\n" in script
    assert "VERL_PLATFORM=cpu" in script and "OMP_NUM_THREADS=1" in script


def test_verl_on_slurm_needs_the_same_nodes_and_gpus_in_the_launcher_and_backend_groups(capsys):
    result = run_cli(["run", "experiment=verl_smoke", "launcher=slurm", "backend.nnodes=2", "--cfg", "job"], capsys)
    assert_refused(result, "launcher.nodes", "backend.nnodes=2")
    result = run_cli(["run", "experiment=paper_slca", "launcher.gpus_per_node=4", "--cfg", "job"], capsys)
    assert_refused(result, "launcher.gpus_per_node", "backend.n_gpus_per_node=8")
    # On CPU the GPUs are logical (Ray's), so the SLURM allocation needs none.
    assert run_cli(["run", "experiment=verl_smoke", "launcher=slurm", "launcher.gpus_per_node=0", "--cfg", "job"], capsys).code == 0


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
    spec = compose_spec(["experiment=verl_smoke"])
    with pytest.raises(ValueError, match="launcher=slurm"):
        verl_job([(spec, tmp_path)], spec.launcher, name="x", log_dir=tmp_path, python=sys.executable, workdir=tmp_path)
