"""What produced a run: code version, package versions, host and seeds (never secrets)."""

from __future__ import annotations

import platform
import socket
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from slca.config.spec import Spec

TRACKED_PACKAGES = ("slca", "torch", "transformers", "tokenizers", "verl", "vllm", "llamafactory", "hydra-core", "pydantic", "wandb")


def git_state(repo: Path) -> dict[str, Any]:
    """Commit and dirty flag of the checkout holding slca; nulls when it is not a git checkout."""
    def run(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = run("rev-parse", "HEAD")
    status = run("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def package_versions() -> dict[str, str]:
    """Installed versions of the packages that decide a run's numbers (absent ones are left out)."""
    versions = {}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def collect(spec: Spec, *, argv: list[str] | None = None) -> dict[str, Any]:
    """The provenance record written beside spec.yaml."""
    repo = Path(__file__).resolve().parents[2]
    return {
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "experiment": spec.experiment,
        "seeds": {"run": spec.run.seed, "eval": list(spec.eval.seeds)},
        "git": git_state(repo),
        "packages": package_versions(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "host": socket.gethostname(),
        "argv": list(argv) if argv is not None else None,
    }
