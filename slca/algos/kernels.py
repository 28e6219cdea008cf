"""[B, T] elementwise kernels of the estimators, run through numpy for CPU tensors.

Why numpy: at 2048 x 8192 the cost is dominated by first-touching the 64 MB outputs; numpy
backs large arrays with transparent huge pages, which makes these ops 2-4x faster than the
equivalent torch CPU ops (measured in benchmarks/estimators.py). Results are torch tensors
sharing the numpy memory; other devices use the torch ops.
"""

from __future__ import annotations

import numpy as np
import torch


def _cpu(*tensors: torch.Tensor) -> bool:
    # numpy has no bfloat16: such tensors take the torch path.
    return all(t.device.type == "cpu" and t.dtype != torch.bfloat16 for t in tensors)


def scale_rows(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """values[:, None] * mask as float32 [B, T]. values [B]."""
    values = values.detach().to(torch.float32)
    if _cpu(values, mask):
        return torch.from_numpy(np.multiply(values.numpy()[:, None], _np(mask), dtype=np.float32))
    return (values.unsqueeze(1) * mask).to(torch.float32)


def select_rows(region: torch.Tensor, if_true: torch.Tensor, if_false: torch.Tensor) -> torch.Tensor:
    """where(region, if_true[:, None], if_false[:, None]) as float32 [B, T]. region [B, T] bool."""
    a = if_true.detach().to(torch.float32)
    b = if_false.detach().to(torch.float32)
    if _cpu(region, a, b):
        return torch.from_numpy(np.where(region.numpy(), a.numpy()[:, None], b.numpy()[:, None]))
    return torch.where(region, a.unsqueeze(1), b.unsqueeze(1))


def difference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a - b as float32 [B, T]."""
    if _cpu(a, b):
        return torch.from_numpy(np.subtract(_np(a), _np(b), dtype=np.float32))
    return a.float() - b.float()


def mul_(out: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """out *= mask in place (out float32 [B, T], mask any numeric/bool dtype)."""
    if _cpu(out, mask):
        np.multiply(out.numpy(), _np(mask), out=out.numpy(), casting="unsafe")
        return out
    return out.mul_(mask)


def count_nonzero(x: torch.Tensor) -> int:
    """Number of non-zero entries."""
    if _cpu(x) and x.is_contiguous():
        arr = x.detach().numpy()
        # Counting the bit patterns is ~3x faster than comparing floats; -0.0 counts as non-zero,
        # which only makes callers take their exact (slower) path.
        int_view = {4: np.int32, 8: np.int64, 2: np.int16}.get(arr.itemsize)
        if arr.dtype.kind == "f" and int_view is not None:
            arr = arr.view(int_view)
        return int(np.count_nonzero(arr))
    return int(torch.count_nonzero(x))


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().numpy()
