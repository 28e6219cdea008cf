"""Embedded local backend: tiny backbone builder, chat template, SFT and checkpoints (CPU or one GPU).

Submodules import torch/transformers lazily; import them directly, e.g.
`from slca.backends.local.sft import run_sft`.
"""

from __future__ import annotations

from slca.lazy import lazy_getattr

_EXPORTS = {
    "build_tiny_backbone": "slca.backends.local.backbone",
    "load_backbone": "slca.backends.local.backbone",
    "template_source": "slca.backends.local.chat_template",
    "render_with_spans": "slca.backends.local.chat_template",
    "split_system_tools": "slca.toolcall.prompts",
    "run_sft": "slca.backends.local.sft",
    "sft_corpus": "slca.backends.local.sft",
    "encode_rows": "slca.backends.local.sft",
    "save_checkpoint": "slca.backends.local.checkpoint",
    "load_latest_checkpoint": "slca.backends.local.checkpoint",
    "capture_rng_states": "slca.backends.local.checkpoint",
    "restore_rng_states": "slca.backends.local.checkpoint",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_getattr(__name__, _EXPORTS)
