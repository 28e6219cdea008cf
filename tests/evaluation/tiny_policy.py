"""A tiny real Qwen3 model and tokenizer for evaluation tests, saved the way the sft and rl stages save theirs."""

from __future__ import annotations

from pathlib import Path


def save_tiny_policy(out: Path, corpus: list[str], vocab_size: int = 320) -> Path:
    """Train a tokenizer on `corpus`, initialise a one-layer model on it and save both into `out`
    (a larger `vocab_size` keeps long prompts short)."""
    from slca.models.tiny import init_model, train_tokenizer
    from slca.config.groups.backbone import TinyBackbone

    cfg = TinyBackbone(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64, vocab_size=vocab_size)
    tokenizer = train_tokenizer(corpus, cfg)
    init_model(cfg, tokenizer).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
