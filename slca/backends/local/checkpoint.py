"""Atomic training checkpoints: weights (safetensors), optimiser/scheduler/RNG/extra state (torch.save).

Layout: `<dir>/step_<NNNNNNNNN>/{model.safetensors, state.pt}`, written into a temporary sibling
directory and renamed into place, so a checkpoint directory either exists complete or not at all.
Everything in `state.pt` is plain Python or tensors, so it loads with `torch.load(weights_only=True)`.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_STEP_DIR = re.compile(r"^step_(\d+)$")
_TMP_PREFIX = ".tmp-step_"


@dataclass
class Checkpoint:
    """What `load_latest_checkpoint` found; `model_path` holds the safetensors weights."""

    path: Path
    step: int
    model_path: Path
    optimizer: dict[str, Any] | None
    scheduler: dict[str, Any] | None
    rng_states: dict[str, Any]
    extra_state: dict[str, Any]

    def load_model(self, model: Any, *, strict: bool = True) -> None:
        """Copy the saved weights into `model` (tied weights handled by safetensors)."""
        from safetensors.torch import load_model

        load_model(model, str(self.model_path), strict=strict, device=str(next(model.parameters()).device))


def capture_rng_states() -> dict[str, Any]:
    """Python, numpy and torch (CPU and CUDA) generator states as tensors and plain lists."""
    import numpy as np
    import torch

    version, mt, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state()
    states: dict[str, Any] = {
        "python": [version, list(mt), gauss],
        "numpy": [name, torch.from_numpy(np.asarray(keys, dtype=np.int64)), int(pos), int(has_gauss), float(cached)],
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        states["cuda"] = list(torch.cuda.get_rng_state_all())
    return states


def restore_rng_states(states: dict[str, Any]) -> None:
    """Inverse of `capture_rng_states` (missing entries are left alone)."""
    import numpy as np
    import torch

    if "python" in states:
        version, mt, gauss = states["python"]
        random.setstate((version, tuple(mt), gauss))
    if "numpy" in states:
        name, keys, pos, has_gauss, cached = states["numpy"]
        np.random.set_state((name, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    if "torch" in states:
        torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


def list_checkpoints(directory: str | os.PathLike) -> list[tuple[int, Path]]:
    """Complete checkpoints in `directory`, oldest first."""
    root = Path(directory)
    if not root.is_dir():
        return []
    found = []
    for p in root.iterdir():
        m = _STEP_DIR.match(p.name)
        if m and p.is_dir() and (p / "state.pt").is_file():
            found.append((int(m.group(1)), p))
    return sorted(found)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def save_checkpoint(
    directory: str | os.PathLike,
    *,
    model: Any,
    optimizer: Any = None,
    scheduler: Any = None,
    rng_states: dict[str, Any] | None = None,
    extra_state: dict[str, Any] | None = None,
    step: int,
    keep_last: int | None = 2,
) -> Path:
    """Write checkpoint `step` atomically and keep only the newest `keep_last` (None keeps all).

    `extra_state` must hold only tensors and plain Python values (weights_only loading).
    """
    import torch
    from safetensors.torch import save_model

    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"step_{step:09d}"
    tmp = Path(tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{step:09d}-", dir=root))
    try:
        save_model(model, str(tmp / "model.safetensors"))
        state = {
            "step": int(step),
            "optimizer": optimizer.state_dict() if optimizer is not None else None,
            "scheduler": scheduler.state_dict() if scheduler is not None else None,
            "rng_states": rng_states if rng_states is not None else capture_rng_states(),
            "extra_state": dict(extra_state or {}),
        }
        with open(tmp / "state.pt", "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        _fsync_dir(tmp)
        if final.exists():
            # Re-saving a step (e.g. after a resume): swap the old one out before renaming in.
            old = Path(tempfile.mkdtemp(prefix=".old-", dir=root))
            os.replace(final, old / final.name)
            os.rename(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, final)
        _fsync_dir(root)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    if keep_last is not None and keep_last > 0:
        for _, p in list_checkpoints(root)[:-keep_last]:
            shutil.rmtree(p, ignore_errors=True)
    return final


def load_checkpoint(path: str | os.PathLike) -> Checkpoint:
    """Read one checkpoint directory (weights stay on disk until `Checkpoint.load_model`)."""
    import torch

    p = Path(path)
    state = torch.load(p / "state.pt", map_location="cpu", weights_only=True)
    return Checkpoint(
        path=p,
        step=int(state["step"]),
        model_path=p / "model.safetensors",
        optimizer=state.get("optimizer"),
        scheduler=state.get("scheduler"),
        rng_states=state.get("rng_states") or {},
        extra_state=state.get("extra_state") or {},
    )


def load_latest_checkpoint(directory: str | os.PathLike) -> Checkpoint | None:
    """The newest complete checkpoint under `directory`, or None; leftover temp dirs are removed."""
    root = Path(directory)
    if not root.is_dir():
        return None
    for p in root.iterdir():
        if p.is_dir() and (p.name.startswith(_TMP_PREFIX) or p.name.startswith(".old-")):
            shutil.rmtree(p, ignore_errors=True)
    found = list_checkpoints(root)
    return load_checkpoint(found[-1][1]) if found else None


def restore(ckpt: Checkpoint, *, model: Any, optimizer: Any = None, scheduler: Any = None, rng: bool = True) -> None:
    """Load weights, optimiser and scheduler state, and (by default) the RNG states from `ckpt`."""
    ckpt.load_model(model)
    if optimizer is not None and ckpt.optimizer is not None:
        optimizer.load_state_dict(ckpt.optimizer)
    if scheduler is not None and ckpt.scheduler is not None:
        scheduler.load_state_dict(ckpt.scheduler)
    if rng:
        restore_rng_states(ckpt.rng_states)
