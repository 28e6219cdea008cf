"""Device choice shared by every in-process stage."""

from __future__ import annotations

from typing import Any


def select_device(wanted: str = "auto", num_threads: int | None = None) -> Any:
    """A torch device: `auto` is cuda when available, else cpu; optionally sets torch's thread count."""
    import torch

    if wanted == "auto":
        wanted = "cuda" if torch.cuda.is_available() else "cpu"
    if num_threads:
        torch.set_num_threads(num_threads)
    return torch.device(wanted)
