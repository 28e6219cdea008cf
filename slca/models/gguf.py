"""The `gguf` backbone kind: a pretrained ChatML checkpoint fetched as GGUF (SmolLM2-135M-Instruct, by
`make real-models`), converted once into a safetensors directory that plain `from_pretrained` loads.

transformers reads GGUF (`gguf_file=`, dequantising every tensor to float32) but refuses to
`save_pretrained` a model it loaded that way, so the conversion builds the same architecture from the
GGUF's config and loads the dequantised state dict into it. Weights stay float32: Q4_1 values are
fp16 scales times small integers, exact in float32 and not in bfloat16. The tokenizer and its chat
template also come from the GGUF's metadata; the GGUF's own template is kept beside the model as
`gguf_chat_template.jinja` whichever template the option renders.

Two cached directories, each written beside its final name and renamed (build_cache): the conversion,
keyed by the GGUF's pinned digest, and for `chat_template: slca` a sibling whose tokenizer renders
slca's template (ChatML like SmolLM2's own, plus the tools and `<tool_call>` markup the GGUF's template
does not render), sharing the conversion's weights by hard link.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from slca.config.groups.backbone import GgufBackbone
from slca.models.backbones import BackboneKind, SftRows, register_kind
from slca.models.build_cache import cached_build
from slca.models.chat_template import template_source
from slca.models.real_files import MissingArtefact, pinned_digests, verified_file

# Bump when the conversion recipe changes so old cache entries are not reused.
BUILD_VERSION = 2
OWN_TEMPLATE_FILE = "gguf_chat_template.jinja"
IM_END = "<|im_end|>"
# SmolLM2's document separator, id 0: padding must not be <|im_end|>, which the policy learns to write.
PAD_TOKEN = "<|endoftext|>"
# The conversion's files a template variant shares (hard links) rather than writes again.
SHARED_FILES = ("config.json", "generation_config.json", "model.safetensors", OWN_TEMPLATE_FILE)


def _pinned(cfg: GgufBackbone) -> str:
    digest = pinned_digests().get(cfg.gguf)
    if digest is None:
        raise MissingArtefact(f"{cfg.gguf}: not a pinned real-model file (see scripts/real_models.sha256)")
    return digest


def conversion_key(cfg: GgufBackbone) -> str:
    """Cache key of the conversion: the GGUF's pinned digest and the recipe."""
    return hashlib.sha256(json.dumps({"gguf": _pinned(cfg), "v": BUILD_VERSION}, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def template_key(cfg: GgufBackbone) -> str:
    """Cache key of slca's template variant: the conversion's key and the template source."""
    payload = json.dumps({"conversion": conversion_key(cfg), "template": template_source(cfg.tools_block)}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def load_gguf(path: Path) -> tuple[Any, Any]:
    """(model, tokenizer) as transformers' own GGUF loader gives them: float32, dequantised."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, local_files_only=True, dtype=torch.float32)
    return model, tokenizer


def convert_gguf(path: Path, out: Path) -> None:
    """Write the GGUF at `path` into `out` as a safetensors checkpoint with its tokenizer and own template."""
    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig

    loaded, tokenizer = load_gguf(path)
    model = AutoModelForCausalLM.from_config(loaded.config, dtype=torch.float32)
    # strict: a tensor the GGUF lacks, or one the architecture does not have, fails the conversion.
    model.load_state_dict(loaded.state_dict(), strict=True)
    # transformers' GGUF tokenizer names <|im_start|> as eos although the metadata's eos id is <|im_end|>'s
    # (SmolLM2's turn end); the metadata's pad is <|im_end|> too, which SFT must not mask as padding.
    tokenizer.eos_token = IM_END
    tokenizer.pad_token = PAD_TOKEN
    # The GGUF conversion sets it; on a byte-level BPE it would strip spaces before punctuation in decode.
    tokenizer.clean_up_tokenization_spaces = False
    eos = tokenizer.eos_token_id
    model.config.eos_token_id = eos
    model.config.pad_token_id = tokenizer.pad_token_id
    model.generation_config = GenerationConfig(eos_token_id=eos, pad_token_id=tokenizer.pad_token_id)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / OWN_TEMPLATE_FILE).write_text(tokenizer.chat_template or "", encoding="utf-8")
    (out / "slca_backbone.json").write_text(json.dumps({"gguf": path.name, "build_version": BUILD_VERSION}, indent=2), encoding="utf-8")


def _share(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system: a copy
        shutil.copyfile(src, dst)


def with_slca_template(converted: Path, cfg: GgufBackbone, out: Path) -> None:
    """The conversion's weights under a tokenizer whose chat template is slca's (cfg.tools_block)."""
    from transformers import AutoTokenizer

    for name in SHARED_FILES:
        _share(converted / name, out / name)
    tokenizer = AutoTokenizer.from_pretrained(converted, local_files_only=True)
    tokenizer.chat_template = template_source(cfg.tools_block)
    tokenizer.save_pretrained(out)
    (out / "slca_backbone.json").write_text(json.dumps({"config": cfg.model_dump(), "build_version": BUILD_VERSION}, indent=2), encoding="utf-8")


def build_gguf_backbone(cfg: GgufBackbone) -> Path:
    """The converted directory for `cfg` (built on first use, then reused); MissingArtefact in one line
    when the GGUF is not fetched or differs from its pinned digest."""
    cache = Path(cfg.cache_dir)
    stem = Path(cfg.gguf).stem.lower()
    converted = cache / f"{stem}-{conversion_key(cfg)}"
    if not (converted / "config.json").is_file():
        source = verified_file(cfg.gguf)  # hashing 100 MB costs a second: only when converting
        cached_build(converted, lambda out: convert_gguf(source, out))
    if cfg.chat_template == "own":
        return converted
    return cached_build(cache / f"{stem}-slca-{template_key(cfg)}", lambda out: with_slca_template(converted, cfg, out))


def gguf_model_dir(cfg: GgufBackbone, sft_rows: SftRows) -> str:
    """The converted directory; the run's SFT rows are not read. An unfetched GGUF refuses the run in
    one line (a RunError) naming the file and `make real-models`."""
    from slca.runcontext import RunError

    try:
        return str(build_gguf_backbone(cfg).resolve())
    except MissingArtefact as exc:
        raise RunError(f"backbone={cfg.name}: {exc}") from None


# Neither template has a LLaMA-Factory twin: that backend trains it with its `qwen` layout (family None).
register_kind(BackboneKind("gguf", model_dir=gguf_model_dir, template_family=lambda cfg: None))
