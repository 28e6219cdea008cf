"""The code a job runs is the code that was submitted: a job queued on the test SLURM cluster before its
checkout was edited runs the snapshot frozen at submission (docs/launch.md#the-code-a-job-runs)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.launch.conftest import SLURM, TOY, job_field, scontrol, wait_until

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
EDIT = '\nraise ImportError("slca was edited after the job was submitted")\n'


def _tree_sha256(root: Path) -> str:
    """sha256 of the .py files under root/slca and root/conf's YAML, by relative path (this test's own walk)."""
    hasher = hashlib.sha256()
    for path in sorted([*root.glob("slca/**/*.py"), *root.glob("conf/**/*.yaml")]):
        hasher.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return hasher.hexdigest()


def test_a_job_queued_before_its_checkout_was_edited_runs_the_code_frozen_at_submission(
    slurm_cluster: Path, caches: list[str], tmp_path: Path
) -> None:
    checkout = tmp_path / "checkout"  # a copy of the tree to edit: the suite's own checkout stays as it is
    for top in ("slca", "conf"):
        shutil.copytree(REPO / top, checkout / top, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    submitted = _tree_sha256(checkout)
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONSAFEPATH": "1"}  # this Python imports slca from the copy
    run_dir = tmp_path / "run"
    # Held for ten minutes after submission, so the edit below certainly lands before the job starts.
    argv = [sys.executable, "-m", "slca.cli", "run", *TOY, *SLURM, *caches, "run.stages=[data]", "logger=none", f"run.dir={run_dir}",
            "+launcher.sbatch_extra.begin=now+600"]
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    job = proc.stdout.split(" as job ")[1].split()[0]

    init = checkout / "slca" / "__init__.py"
    init.write_text(init.read_text() + EDIT)
    control = subprocess.run([sys.executable, "-c", "import slca"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert control.returncode != 0 and "edited after the job was submitted" in control.stderr, "the edit breaks any import from the checkout"
    scontrol("update", f"JobId={job}", "StartTime=now")

    def ended() -> dict | None:
        state = job_field(job, "JobState")  # asked first: a job that could not import slca ends without a record
        record = json.loads((run_dir / "job.json").read_text()) if (run_dir / "job.json").is_file() else {}
        if record.get("state") in ("done", "failed"):
            return record
        return {"state": f"job {state or 'gone'} without a record", **record} if state in ("", "COMPLETED", "FAILED") else None

    record = wait_until(ended, "the job to end", 300, 1)
    assert record["state"] == "done", record
    assert (run_dir / "data" / "result.json").is_file()
    (snapshot,) = (run_dir / "code").iterdir()
    assert _tree_sha256(snapshot) == submitted, "the snapshot holds the tree as it was submitted"
    assert EDIT not in (snapshot / "slca" / "__init__.py").read_text()
    provenance = json.loads((run_dir / "provenance.json").read_text())
    submission, job_run = provenance["history"][0], provenance["history"][-1]
    assert submission["code"] == {"snapshot": None, "checkout": str(checkout.resolve())}, "the submitting command ran the checkout"
    assert job_run["code"]["checkout"] == str(checkout.resolve()) and job_run["code"]["snapshot"].startswith(snapshot.name), \
        "the job ran the snapshot and records its digest"
