"""Atomic training checkpoints: weights (safetensors), optimiser/scheduler/RNG/extra state (torch.save).

Layout: `<dir>/step_<NNNNNNNNN>/{model.safetensors, state.pt}`, written into a temporary sibling
directory and renamed into place, so a checkpoint directory either exists complete or not at all.
Everything in `state.pt` is plain Python or tensors, so it loads with `torch.load(weights_only=True)`.
A checkpoint damaged afterwards (a truncated file, a full disk, a bad copy) is skipped by
`load_latest_checkpoint` with a note naming it, and the newest intact one is used instead.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

_STEP_DIR = re.compile(r"^step_(\d+)$")
_TMP_PREFIX = ".tmp-step_"


class CheckpointError(RuntimeError):
    """A checkpoint directory whose files cannot be read back; the message names the file."""


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


def _step_dirs(root: Path) -> list[tuple[int, Path]]:
    """Every `step_N` directory under `root`, oldest first, complete or not."""
    if not root.is_dir():
        return []
    found = []
    for p in root.iterdir():
        m = _STEP_DIR.match(p.name)
        if m and p.is_dir():
            found.append((int(m.group(1)), p))
    return sorted(found)


def list_checkpoints(directory: str | os.PathLike) -> list[tuple[int, Path]]:
    """Complete checkpoints in `directory`, oldest first."""
    return [(step, p) for step, p in _step_dirs(Path(directory)) if (p / "state.pt").is_file()]


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
    """Read one checkpoint directory (weights stay on disk until `Checkpoint.load_model`, but their
    file is checked to be complete). CheckpointError names the file that cannot be read."""
    import torch
    from safetensors import safe_open

    p = Path(path)
    state_path, model_path = p / "state.pt", p / "model.safetensors"
    try:
        state = torch.load(state_path, map_location="cpu", weights_only=True)
        step = int(state["step"])
    except Exception as exc:  # noqa: BLE001 - torch reports damage as several unrelated types
        raise CheckpointError(f"{state_path} is unreadable ({_reason(exc)})") from None
    try:
        with safe_open(str(model_path), framework="pt") as weights:  # validates the header covers the file
            weights.keys()
    except Exception as exc:  # noqa: BLE001 - SafetensorError, OSError
        raise CheckpointError(f"{model_path} is unreadable ({_reason(exc)})") from None
    return Checkpoint(
        path=p,
        step=step,
        model_path=model_path,
        optimizer=state.get("optimizer"),
        scheduler=state.get("scheduler"),
        rng_states=state.get("rng_states") or {},
        extra_state=state.get("extra_state") or {},
    )


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else 'no detail'}"


def load_latest_checkpoint(directory: str | os.PathLike, *, note: Callable[[str], None] = print) -> Checkpoint | None:
    """The newest intact checkpoint under `directory`, or None; leftover temp dirs are removed.

    A damaged checkpoint is skipped with a note naming it (it stays on disk: the next save of that
    step replaces it), and the one before it is tried."""
    root = Path(directory)
    if not root.is_dir():
        return None
    for p in root.iterdir():
        if p.is_dir() and (p.name.startswith(_TMP_PREFIX) or p.name.startswith(".old-")):
            shutil.rmtree(p, ignore_errors=True)
    # Incomplete ones too, so that a damaged checkpoint is named rather than silently passed over.
    newest_first = [p for _, p in reversed(_step_dirs(root))]
    for i, path in enumerate(newest_first):
        try:
            return load_checkpoint(path)
        except CheckpointError as exc:
            then = f"trying {newest_first[i + 1].name}" if i + 1 < len(newest_first) else "no intact checkpoint left, starting from scratch"
            note(f"[checkpoint] skipping {path.name}: {exc}; {then}")
    return None


def restore(ckpt: Checkpoint, *, model: Any, optimizer: Any = None, scheduler: Any = None, rng: bool = True) -> None:
    """Load weights, optimiser and scheduler state, and (by default) the RNG states from `ckpt`."""
    ckpt.load_model(model)
    if optimizer is not None and ckpt.optimizer is not None:
        optimizer.load_state_dict(ckpt.optimizer)
    if scheduler is not None and ckpt.scheduler is not None:
        scheduler.load_state_dict(ckpt.scheduler)
    if rng:
        restore_rng_states(ckpt.rng_states)
