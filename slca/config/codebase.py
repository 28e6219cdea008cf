"""Which code this process runs: the checkout slca is installed from, or a frozen snapshot of it that a
launched job runs from (docs/launch.md#the-code-a-job-runs).

A snapshot is a copy of the `slca` package and `conf/` (slca/launch/snapshot.py writes it at submission)
with a record, `SNAPSHOT.json`, beside them: its content digest, the checkout it was taken from and that
checkout's git state then. Code that reads the checkout's other contents (the real-model cache, the
vendored τ² tree, the environments under `.cache/`) asks `checkout_root()`, which is the checkout itself
in either case; provenance and protocol cards record `code_state()`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SNAPSHOT_RECORD = "SNAPSHOT.json"


def code_root() -> Path:
    """The folder holding the `slca` package and `conf/` this process imported."""
    return Path(__file__).resolve().parents[2]


def snapshot_record(root: Path | None = None) -> dict[str, Any] | None:
    """The snapshot record of `root` (default: the code this process runs); None for a checkout."""
    path = (root or code_root()) / SNAPSHOT_RECORD
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RuntimeError(f"{path} is unreadable ({type(exc).__name__}); the code snapshot it describes is damaged") from None
    if not isinstance(record, dict) or not isinstance(record.get("digest"), str) or not isinstance(record.get("checkout"), str):
        raise RuntimeError(f"{path} is not a code snapshot record (digest and checkout expected)")
    return record


def checkout_root() -> Path:
    """The checkout whose caches, vendored trees and environments this code uses (a snapshot's source)."""
    record = snapshot_record()
    return Path(record["checkout"]) if record else code_root()


def git_state(repo: Path) -> dict[str, Any]:
    """Commit and dirty flag of the checkout `repo`; nulls when it is not a git checkout."""
    import subprocess

    def run(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = run("rev-parse", "HEAD")
    status = run("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def code_state() -> dict[str, Any]:
    """What code runs here: `snapshot` (its digest, or None when running from the checkout itself), the
    checkout and its git state (for a snapshot: as it was when the snapshot was taken)."""
    record = snapshot_record()
    if record is None:
        root = code_root()
        return {"snapshot": None, "checkout": str(root), "git": git_state(root)}
    git = record.get("git") if isinstance(record.get("git"), dict) else {"commit": None, "dirty": None}
    return {"snapshot": record["digest"], "checkout": record["checkout"], "git": git}
