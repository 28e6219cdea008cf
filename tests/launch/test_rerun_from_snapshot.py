"""`slca run --spec RUN_DIR/spec.yaml --from-snapshot` runs a run's spec again on the code snapshot the
run recorded, not on the checkout as it is now; a snapshot that is missing or whose files changed is
refused in one line (docs/launch.md#the-code-a-job-runs)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EDIT = '\nraise ImportError("slca was edited after the snapshot was taken")\n'
MAKE_RUN = """
import json, sys
from pathlib import Path
from slca.config.compose import compose_spec
from slca.config.io import dump_spec
from slca.launch.snapshot import freeze
run = Path(sys.argv[1])
run.mkdir()
snapshot = freeze(run)
overrides = ["experiment=embedded_smoke", "data.n_sft=8", "data.n_rl=4", "data.n_eval=2", "run.stages=[data]", "logger=none",
             f"run.dir={run}", f"data.cache_dir={run.parent / 'cache'}"]
(run / "spec.yaml").write_text(dump_spec(compose_spec(overrides)))
# What a launched job records: the digest of the snapshot it ran from.
(run / "provenance.json").write_text(json.dumps({"history": [{"code": {"snapshot": snapshot.digest, "checkout": "submitted"}}]}))
print(snapshot.digest)
"""


def _slca(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "slca.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_a_finished_runs_spec_reruns_on_its_frozen_code_after_the_checkout_was_edited_and_a_changed_snapshot_is_refused(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"  # a copy to edit: the suite's own checkout stays as it is
    for top in ("slca", "conf"):
        shutil.copytree(REPO / top, checkout / top, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONSAFEPATH": "1"}  # this Python imports slca from the copy
    run_dir = tmp_path / "run"
    made = subprocess.run([sys.executable, "-c", MAKE_RUN, str(run_dir)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    digest = made.stdout.split()[-1]
    (snapshot,) = (run_dir / "code").iterdir()

    pipeline = checkout / "slca" / "pipeline.py"  # what running a spec imports; the command line itself does not
    pipeline.write_text(pipeline.read_text() + EDIT)
    control = _slca(["run", "--spec", str(run_dir / "spec.yaml")], tmp_path, env)
    assert control.returncode != 0 and "edited after the snapshot was taken" in control.stderr, "the edit breaks a run from the checkout"

    rerun = _slca(["run", "--spec", str(run_dir / "spec.yaml"), "--from-snapshot"], tmp_path, env)
    assert rerun.returncode == 0, rerun.stderr
    assert f"on its code snapshot {snapshot.resolve()}" in rerun.stdout and (run_dir / "data" / "result.json").is_file()
    history = json.loads((run_dir / "provenance.json").read_text())["history"]
    assert history[-1]["code"]["snapshot"] == digest, "the rerun ran the snapshot and recorded its digest"
    assert history[-1]["argv"][:3] == ["slca", "run", "--spec"] and "--from-snapshot" not in history[-1]["argv"]

    frozen = snapshot / "slca" / "pipeline.py"
    frozen.chmod(0o644)
    frozen.write_text(frozen.read_text() + "# changed\n")
    changed = _slca(["run", "--spec", str(run_dir / "spec.yaml"), "--from-snapshot"], tmp_path, env)
    assert changed.returncode != 0 and changed.stderr.count("\n") == 1, changed.stderr
    assert f"no longer hash to the digest {digest[:16]}" in changed.stderr
    shutil.rmtree(snapshot)
    missing = _slca(["run", "--spec", str(run_dir / "spec.yaml"), "--from-snapshot"], tmp_path, env)
    assert missing.returncode != 0 and missing.stderr.count("\n") == 1 and f"the code snapshot {digest[:16]} it ran from is not there" in missing.stderr
    nothing = _slca(["run", "--from-snapshot"], tmp_path, env)
    assert nothing.returncode != 0 and "give --spec RUN_DIR/spec.yaml" in nothing.stderr
