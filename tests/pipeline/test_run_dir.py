"""Run directories keep their record: an append-only provenance history, spec.yaml untouched by
re-runs that produce nothing, one writer at a time (a lock, tested with real processes), and a
data stage that is redone when the files it recorded are gone."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.pipeline.conftest import slca

# Real runs of the embedded pipeline behind each check: not in `make test-fast`.
pytestmark = pytest.mark.slow

SMALL = ("experiment=embedded_smoke", "logger=none", "data.n_sft=20", "data.n_rl=10", "data.n_eval=5")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _data_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    proc = slca("run", *SMALL, "run.stages=[data]", f"run.dir={run}", f"data.cache_dir={tmp_path / 'cache'}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return run


def test_rerunning_a_finished_run_appends_to_history_and_rewrites_nothing(tmp_path: Path) -> None:
    run = _data_run(tmp_path)
    first = json.loads((run / "provenance.json").read_text())
    spec_before, result_before = _sha(run / "spec.yaml"), _sha(run / "data" / "result.json")

    for _ in range(2):
        proc = slca("run", "--spec", str(run / "spec.yaml"), "logger=wandb", "logger.mode=disabled", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "[data] already done, skipped" in proc.stdout

    assert _sha(run / "spec.yaml") == spec_before and _sha(run / "data" / "result.json") == result_before
    prov = json.loads((run / "provenance.json").read_text())
    assert [h["invocation"] for h in prov["history"]] == [1, 2, 3]
    assert prov["history"][0] == first["history"][0]  # the record of what produced the results, unchanged
    assert {k: v for k, v in prov.items() if k != "history"} == {k: v for k, v in first.items() if k != "history"}
    again = prov["history"][2]
    assert again["stages_done"] == ["data"] and again["stages_to_run"] == [] and again["spec_written"] is False
    assert again["spec_changes"]["logger.name"] == ["none", "wandb"]
    assert again["argv"][-2:] == ["logger=wandb", "logger.mode=disabled"]
    assert json.loads((run / "data" / "result.json").read_text())["invocation"] == 1


def _tree(root: Path) -> dict[str, tuple[str, int]]:
    """Every entry under `root`: (content digest, or a link's target, or "dir"; modification time in ns)."""
    state = {}
    for path in sorted(root.rglob("*")):
        stat = path.lstat()
        what = os.readlink(path) if path.is_symlink() else "dir" if path.is_dir() else _sha(path)
        state[str(path.relative_to(root))] = (what, stat.st_mtime_ns)
    return state


def test_rerunning_a_finished_run_leaves_its_wandb_files_untouched(tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = slca("run", "experiment=embedded_smoke", "logger=wandb", "logger.mode=offline", "run.stages=[data,sft]", "data.n_sft=20",
                "data.n_rl=10", "data.n_eval=5", "train.sft.max_rows=20", f"run.dir={run}", f"data.cache_dir={tmp_path / 'cache'}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    before = _tree(run / "wandb")
    assert [name for name in before if name.startswith("offline-run-") and name.endswith(".wandb")], "SFT logged to W&B offline"

    proc = slca("run", "--spec", str(run / "spec.yaml"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "[sft] already done, skipped" in proc.stdout
    assert _tree(run / "wandb") == before, "no new offline-run-*, no rewritten debug logs"
    assert len(json.loads((run / "provenance.json").read_text())["history"]) == 2


def test_provenance_records_what_decides_bit_level_reproducibility(tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = slca("run", *SMALL, "run.stages=[data]", f"run.dir={run}", f"data.cache_dir={tmp_path / 'cache'}", "backend.num_threads=1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    compute = json.loads((run / "provenance.json").read_text())["compute"]
    with open("/proc/cpuinfo") as fh:  # x86 names the model here; elsewhere the platform does
        model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), platform.processor() or platform.machine())
    assert compute["cpu_model"] == model
    assert compute["num_threads_configured"] == 1 and compute["torch_threads"] == 1
    assert compute["cpu_count"] == os.cpu_count() and compute["cpus_usable"] == len(os.sched_getaffinity(0))


def test_a_deleted_data_cache_is_rebuilt_byte_identical_and_the_new_spec_kept_with_the_old_values(tmp_path: Path) -> None:
    run = _data_run(tmp_path)
    recorded = json.loads((run / "data" / "result.json").read_text())
    original = {split: _sha(Path(recorded[split])) for split in ("sft", "rl", "eval")}

    Path(recorded["rl"]).unlink()  # one split gone from an otherwise complete cache entry
    proc = slca("run", "--spec", str(run / "spec.yaml"), "logger=wandb", "logger.mode=disabled", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"[data] finished before, but {recorded['rl']} is gone: redoing it" in proc.stdout
    assert {split: _sha(Path(recorded[split])) for split in original} == original

    for split in ("sft", "rl", "eval"):
        Path(recorded[split]).unlink()
    proc = slca("run", "--spec", str(run / "spec.yaml"), cwd=tmp_path)
    assert proc.returncode == 0 and "redoing it" in proc.stdout, proc.stderr
    assert {split: _sha(Path(recorded[split])) for split in original} == original

    history = json.loads((run / "provenance.json").read_text())["history"]
    assert [h["stages_to_run"] for h in history] == [["data"], ["data"], ["data"]]
    assert history[1]["spec_written"] is True and history[1]["spec_changes"]["logger.name"] == ["none", "wandb"]
    assert json.loads((run / "data" / "result.json").read_text())["invocation"] == 3


def _lock_holder(run: Path) -> int | None:
    try:
        return json.loads((run / "run.lock").read_text() or "{}").get("pid")
    except (OSError, ValueError):
        return None


def test_a_second_run_on_a_busy_run_dir_is_refused_at_once_and_a_dead_holder_is_taken_over(tmp_path: Path) -> None:
    run = tmp_path / "run"
    cache = f"data.cache_dir={tmp_path / 'cache'}"
    command = [sys.executable, "-m", "slca.cli", "run", *SMALL, "run.stages=[data,sft]", f"run.dir={run}", cache]
    first = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while _lock_holder(run) != first.pid or not (run / "provenance.json").exists():
            assert first.poll() is None, "the first run ended before taking its lock"
            assert time.monotonic() < deadline, "the first run never took the lock"
            time.sleep(0.1)

        start = time.monotonic()
        second = slca("run", *SMALL, "run.stages=[data]", f"run.dir={run}", cache, cwd=tmp_path)
        assert first.poll() is None, "the first run must still be running for this test to mean anything"
        assert second.returncode == 4 and time.monotonic() - start < 60
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and f"in use by pid {first.pid} on host" in lines[0] and str(run) in lines[0], second.stderr
        history = json.loads((run / "provenance.json").read_text())["history"]
        assert len(history) == 1  # the refused run recorded nothing
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()

    # The killed holder left its record in the lock file; the kernel released its lock.
    assert _lock_holder(run) == first.pid
    third = slca("run", *SMALL, "run.stages=[data]", f"run.dir={run}", cache, cwd=tmp_path)
    assert third.returncode == 0, third.stderr
    assert f"taking over a stale lock on {run} left by pid {first.pid}" in third.stdout
    assert (run / "run.lock").read_text() == ""  # a clean exit leaves no holder behind


def test_the_lock_is_exclusive_between_processes_and_released_on_exit(tmp_path: Path) -> None:
    from slca.runlock import RunLock, RunLocked

    holder = subprocess.Popen(
        [sys.executable, "-c", f"import sys, time\nfrom slca.runlock import RunLock\nwith RunLock({str(tmp_path)!r}):\n"
         "    print('held', flush=True)\n    sys.stdin.readline()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunLocked, match=rf"in use by pid {holder.pid} on host"):
            RunLock(tmp_path).acquire()
    finally:
        holder.communicate("\n", timeout=60)
    with RunLock(tmp_path):
        assert _lock_holder(tmp_path) == os.getpid()
