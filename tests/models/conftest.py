"""Qwen's real tokenizers, loaded once per session (about 2 s each) for the fidelity and rollout tests."""

from __future__ import annotations

import pytest

from slca.models.real_files import QWEN_TOKENIZERS, qwen_tokenizer_dir


@pytest.fixture(scope="session")
def qwen_tokenizers() -> dict:
    """Model name (qwen2.5, qwen3) → its tokenizer with the official chat template, from the fetched files."""
    from transformers import AutoTokenizer

    return {name: AutoTokenizer.from_pretrained(qwen_tokenizer_dir(name)) for name in QWEN_TOKENIZERS}
