"""The code a job runs is the code that was submitted (docs/launch.md#the-code-a-job-runs).

At submission the `slca` package and `conf/` this process runs are copied into `<dir>/code/<digest>/`,
named by a digest of their contents (every file's path and bytes; bytecode caches left out), with a
record (`SNAPSHOT.json`: the digest, the checkout and its git state). The job's Python imports slca
from there: `PYTHONPATH` names the snapshot and `PYTHONSAFEPATH` keeps the job's working directory
(often the checkout) off `sys.path`, in every Python process the job starts (verl's workers too). Edits
made to the checkout after submission therefore reach neither queued nor requeued jobs; submitting
again freezes the code as it is then. Unchanged code maps to the same folder, which is reused.
`slca run --spec RUN_DIR/spec.yaml --from-snapshot` runs a run's spec again on the snapshot it recorded.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from slca.config.codebase import SNAPSHOT_RECORD, code_root, code_state
from slca.fileio import atomic_directory
from slca.launch.errors import SweepError

FROZEN = ("slca", "conf")  # what a job imports or reads beside its code; caches and vendored trees stay in the checkout
SKIPPED_DIRS = ("__pycache__",)
SKIPPED_SUFFIXES = (".pyc", ".pyo")


@dataclass(frozen=True)
class Snapshot:
    """A frozen copy of the code: its folder and content digest."""

    root: Path
    digest: str

    def environment(self) -> dict[str, str]:
        """What a job's environment needs to import slca from the snapshot (`existing` PYTHONPATH kept after it)."""
        existing = os.environ.get("PYTHONPATH")
        return {"PYTHONPATH": str(self.root) + (os.pathsep + existing if existing else ""), "PYTHONSAFEPATH": "1"}

    def shell_lines(self) -> list[str]:
        """The same as shell lines for a batch script (after the user's setup lines, which may set PYTHONPATH)."""
        return [f"export PYTHONPATH={shlex.quote(str(self.root))}${{PYTHONPATH:+:$PYTHONPATH}}", "export PYTHONSAFEPATH=1"]


def _files(root: Path) -> list[Path]:
    """The files of FROZEN under `root`, relative, sorted."""
    found = []
    for top in FROZEN:
        for dirpath, dirnames, filenames in os.walk(root / top):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
            found.extend(Path(dirpath, name).relative_to(root) for name in filenames if not name.endswith(SKIPPED_SUFFIXES))
    return sorted(found)


def digest(root: Path) -> str:
    """sha256 over every frozen file's relative path and bytes, in path order."""
    hasher = hashlib.sha256()
    for rel in _files(root):
        data = (root / rel).read_bytes()
        hasher.update(f"{rel.as_posix()}\0{len(data)}\0".encode())
        hasher.update(data)
    return hasher.hexdigest()


def freeze(into: Path) -> Snapshot:
    """Snapshot the code this process runs into `into/code/<digest>` (reused when it is already there)."""
    source = code_root()
    files = _files(source)
    content = digest(source)
    final = into / "code" / content[:16]
    if (final / SNAPSHOT_RECORD).is_file():
        return Snapshot(final.resolve(), content)
    state = code_state()  # from a snapshot (a job submitting jobs): its checkout and git state carry over
    with atomic_directory(final) as tmp:
        for rel in files:
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / rel, tmp / rel)
        record = {"digest": content, "checkout": state["checkout"], "git": state["git"], "files": len(files)}
        (tmp / SNAPSHOT_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        if digest(tmp) != content:  # a file changed while it was copied: this copy is no snapshot of anything
            raise SweepError(f"the code under {source} changed while it was being frozen; submit again")
    return Snapshot(final.resolve(), content)


def recorded_snapshot(run_dir: Path) -> Snapshot:
    """The snapshot the run's latest invocation ran from (in the run's or its sweep's `code/`), its files
    checked against the digest provenance.json recorded; SweepError (one line) when there is none or it changed."""
    from slca.config.provenance import read_provenance

    record = read_provenance(run_dir / "provenance.json") or {}
    recorded = [h.get("code", {}).get("snapshot") for h in record.get("history", []) if isinstance(h.get("code"), dict)]
    recorded = [d for d in recorded if isinstance(d, str)]
    if not recorded:
        raise SweepError(f"{run_dir}: its provenance.json records no code snapshot (the run ran from a checkout, not a launched job)")
    content = recorded[-1]
    places = [run_dir / "code" / content[:16], run_dir.parent.parent / "code" / content[:16]]  # a run, a sweep's run
    found = next((p for p in places if (p / SNAPSHOT_RECORD).is_file()), None)
    if found is None:
        raise SweepError(f"{run_dir}: the code snapshot {content[:16]} it ran from is not there ({' or '.join(map(str, places))})")
    if digest(found) != content:
        raise SweepError(f"{found}: its files no longer hash to the digest {content[:16]}... the run recorded; it is not the code the run ran")
    return Snapshot(found.resolve(), content)


def rerun_from_snapshot(spec_path: str | None, argv: list[str]) -> int:
    """`slca run --spec SPEC --from-snapshot ...`: the same command, minus --from-snapshot, in a Python
    that imports slca from the run's recorded snapshot; its exit code."""
    from slca.launch.lookup import resolve

    if not spec_path:
        raise SweepError("--from-snapshot runs a finished run's spec again: give --spec RUN_DIR/spec.yaml (or the run's id prefix)")
    path = resolve(spec_path, sweeps=False)
    spec = path / "spec.yaml" if path.is_dir() else path
    snapshot = recorded_snapshot(spec.parent)
    args, after_spec = [], False
    for arg in argv:
        if arg != "--from-snapshot":
            args.append(str(spec) if after_spec else f"--spec={spec}" if arg.startswith("--spec=") else arg)
        after_spec = arg == "--spec"
    print(f"slca: running {spec} on its code snapshot {snapshot.root}", flush=True)
    return subprocess.run([sys.executable, "-m", "slca.cli", *args], env={**os.environ, **snapshot.environment()}, check=False).returncode
