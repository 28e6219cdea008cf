"""What produced a run: code version, package versions, host, CPU/GPU, threads and seeds (never secrets).

`provenance.json` keeps the invocation that created the run at its top level and every invocation,
that one included, in `history`, oldest first. Entries are only ever appended: the record of what
produced finished stages is never rewritten (see `append_invocation`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import socket
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from slca.config.codebase import code_state
from slca.config.spec import Spec

TRACKED_PACKAGES = ("slca", "torch", "transformers", "tokenizers", "verl", "vllm", "llamafactory", "hydra-core", "pydantic", "wandb")


def package_versions() -> dict[str, str]:
    """Installed versions of the packages that decide a run's numbers (absent ones are left out)."""
    return dict(_loaded_versions())


@functools.cache
def _loaded_versions() -> tuple[tuple[str, str], ...]:
    # Read once per process: the code a process runs is what it imported, and reading the installed
    # metadata costs ~20 ms, which every protocol card paid (an evaluation of 16 entries takes ~30 ms).
    versions = []
    for name in TRACKED_PACKAGES:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            continue
    return tuple(versions)


class ProvenanceError(ValueError):
    """An existing provenance.json that cannot be read or extended (never silently replaced)."""


def cpu_model() -> str:
    """The CPU's marketing name (float results can differ bit-wise across CPU models)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def compute_state(spec: Spec) -> dict[str, Any]:
    """CPU model, cores, the torch thread count the stages will use, and the GPU if one is used.

    Thread count and CPU model decide whether two runs can be bit-identical, so they are recorded.
    """
    configured = getattr(spec.backend, "num_threads", None)
    state: dict[str, Any] = {
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "num_threads_configured": configured,
        "gpu": None,
    }
    try:
        import torch
    except ImportError:
        state["torch_threads"] = configured
        return state
    state["torch_threads"] = configured or torch.get_num_threads()
    if getattr(spec.backend, "device", "auto") != "cpu" and torch.cuda.is_available():
        state["gpu"] = torch.cuda.get_device_name(0)
    return state


def collect(spec: Spec, *, argv: list[str] | None = None) -> dict[str, Any]:
    """One invocation's provenance record."""
    code = code_state()
    return {
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "experiment": spec.experiment,
        "seeds": {"run": spec.run.seed, "eval": list(spec.eval.seeds)},
        "git": code["git"],
        "code": {"snapshot": code["snapshot"], "checkout": code["checkout"]},
        "packages": package_versions(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "host": socket.gethostname(),
        "compute": compute_state(spec),
        "argv": list(argv) if argv is not None else None,
    }


def spec_digest(spec_yaml: str) -> str:
    """sha256 of a resolved spec.yaml's text."""
    return hashlib.sha256(spec_yaml.encode("utf-8")).hexdigest()


def read_provenance(path: Path) -> dict[str, Any] | None:
    """The run's provenance.json, None when absent; ProvenanceError naming the file when unreadable."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ProvenanceError(
            f"{path} is unreadable ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'empty'}); "
            "it records what produced this run, so slca will not replace it: restore it or move it aside"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("history", []), list):
        raise ProvenanceError(f"{path} is not a provenance record (expected an object with a `history` list); restore it or move it aside")
    return data


def append_invocation(existing: dict[str, Any] | None, record: dict[str, Any]) -> dict[str, Any]:
    """The provenance document with `record` appended to its history (a new one when `existing` is None).

    The top level stays the first invocation's record; a file from before histories existed
    becomes the first entry of its own history.
    """
    if existing is None:
        first = {**record, "invocation": 1}
        return {**first, "history": [first]}
    history = list(existing.get("history") or [{k: v for k, v in existing.items() if k != "history"}])
    history.append({**record, "invocation": len(history) + 1})
    return {**existing, "history": history}
