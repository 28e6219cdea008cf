"""Loading a model directory (or a hub id on this machine) as (model, tokenizer), offline."""

from __future__ import annotations

import os
from typing import Any


def load_backbone(model_dir: str | os.PathLike, *, device: Any = None) -> tuple[Any, Any]:
    """(model, tokenizer) from `model_dir`: local files only, safetensors weights; moved to `device` when given."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True, use_safetensors=True)
    if device is not None:
        model.to(device)
    return model, tokenizer
