"""The `tiny_qwen` backbone kind: Qwen's real tokenizer and official chat template (from the real-models
cache, slca.models.real_files) on a tiny randomly initialised model of that Qwen's architecture
(Qwen2 for qwen2.5, Qwen3 for qwen3), so the whole pipeline meets Qwen's real tokens and prompts on CPU.

Built once per config and cached under `cfg.cache_dir/tiny_<qwen>-<key>/` like the tiny backbone (the
model by `save_pretrained`, Qwen's tokenizer files copied as fetched); the key covers the config and the
pinned digests of Qwen's tokenizer files.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from slca.config.groups.backbone import TinyQwenBackbone
from slca.models.backbones import BackboneKind, SftRows, register_kind
from slca.models.build_cache import cached_build
from slca.models.real_files import TOKENIZER_FILES, MissingArtefact, pinned_digests, qwen_tokenizer_dir

# Bump when the build recipe changes so old cache entries are not reused.
BUILD_VERSION = 1
# LLaMA-Factory's (and the hub configs') template family of each Qwen's official template.
TEMPLATE_FAMILIES = {"qwen2.5": "qwen", "qwen3": "qwen3"}


def tiny_qwen_key(cfg: TinyQwenBackbone) -> str:
    """Cache key: every build-relevant config field, the digests of Qwen's tokenizer files, the recipe."""
    digests = {name: digest for name, digest in pinned_digests().items() if name.startswith(f"{cfg.qwen}/")}
    payload = json.dumps({"cfg": cfg.model_dump(exclude={"cache_dir", "name"}), "tokenizer": digests, "v": BUILD_VERSION}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def init_qwen_model(cfg: TinyQwenBackbone, tokenizer: Any) -> Any:
    """A Qwen2ForCausalLM (qwen2.5) or Qwen3ForCausalLM (qwen3) with random weights seeded by cfg.seed.

    The vocabulary is the tokenizer's whole (Qwen's ~151k tokens and its added ones), not the real
    checkpoints' padded 151,936 rows: an untrained model could otherwise sample ids no token has.
    Embeddings are tied, which halves the largest tensor.
    """
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM

    config_cls, model_cls = (Qwen2Config, Qwen2ForCausalLM) if cfg.qwen == "qwen2.5" else (Qwen3Config, Qwen3ForCausalLM)
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    config = config_cls(
        vocab_size=len(tokenizer),
        hidden_size=cfg.hidden_size,
        intermediate_size=cfg.intermediate_size,
        num_hidden_layers=cfg.num_layers,
        num_attention_heads=cfg.num_heads,
        num_key_value_heads=cfg.num_kv_heads,
        head_dim=cfg.hidden_size // cfg.num_heads,
        max_position_embeddings=cfg.max_position_embeddings,
        tie_word_embeddings=True,
        eos_token_id=eos,
        pad_token_id=pad,
        bos_token_id=None,
        dtype="float32",
    )
    torch.manual_seed(cfg.seed)
    model = model_cls(config)
    model.generation_config = GenerationConfig(eos_token_id=eos, pad_token_id=pad)
    return model


def build_tiny_qwen(cfg: TinyQwenBackbone) -> Path:
    """Build (or reuse from the cache) the tiny model with Qwen's tokenizer; return its directory.

    A missing or altered tokenizer file of Qwen's is real_files.MissingArtefact: one line naming the
    file and `make real-models`.
    """
    from transformers import AutoTokenizer

    def write(out: Path) -> None:
        # Checked against their pinned digests when building; a cached build holds its own copy, the
        # files themselves (byte for byte Qwen's, and cheaper than re-serialising 151k tokens).
        tokenizer_dir = qwen_tokenizer_dir(cfg.qwen)
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir, local_files_only=True)
        init_qwen_model(cfg, tokenizer).save_pretrained(out)
        for name in TOKENIZER_FILES:
            shutil.copyfile(tokenizer_dir / name, out / name)
        (out / "slca_backbone.json").write_text(json.dumps({"config": cfg.model_dump(), "build_version": BUILD_VERSION}, indent=2), encoding="utf-8")

    return cached_build(Path(cfg.cache_dir) / f"tiny_{cfg.qwen}-{tiny_qwen_key(cfg)}", write)


def tiny_qwen_model_dir(cfg: TinyQwenBackbone, sft_rows: SftRows) -> str:
    """The built directory; Qwen's tokenizer is fixed, so the run's SFT rows are not read. Unfetched
    tokenizer files refuse the run in one line (a RunError), as any missing input does."""
    from slca.runcontext import RunError

    try:
        return str(build_tiny_qwen(cfg).resolve())
    except MissingArtefact as exc:
        raise RunError(f"backbone={cfg.name}: {exc}") from None


register_kind(BackboneKind("tiny_qwen", model_dir=tiny_qwen_model_dir, template_family=lambda cfg: TEMPLATE_FAMILIES[cfg.qwen]))
