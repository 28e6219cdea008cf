"""Embedded local backend: SFT, the RL loop and checkpoints (CPU or one GPU).

Submodules import torch/transformers lazily; import them directly, e.g.
`from slca.backends.local.sft import run_sft`.
"""

from __future__ import annotations

from slca.lazy import lazy_getattr

_EXPORTS = {
    "run_sft": "slca.backends.local.sft",
    "encode_rows": "slca.backends.local.sft",
    "save_checkpoint": "slca.backends.local.checkpoint",
    "load_latest_checkpoint": "slca.backends.local.checkpoint",
    "capture_rng_states": "slca.backends.local.checkpoint",
    "restore_rng_states": "slca.backends.local.checkpoint",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_getattr(__name__, _EXPORTS)
