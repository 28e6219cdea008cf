"""`backbone` group: the policy model, built locally (tiny, tiny_qwen), converted from a fetched GGUF
(gguf) or named by a hub id."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from slca.config.base import RuleViolation, SlcaModel
from slca.config.limits import MAX_CONTEXT_TOKENS, MAX_SEED
from slca.config.options import Options

# The tiny backbone is built in float32 in this process; the trainer keeps weights, gradients and two
# AdamW moments, so 2**30 parameters already take 16 GiB.
MAX_TINY_PARAMETERS = 2**30


BACKBONE_OPTIONS = Options("backbone", tag="kind")


@BACKBONE_OPTIONS.add
class TinyBackbone(SlcaModel):
    """A randomly initialised Qwen3-architecture model with a tokenizer trained on the synthetic corpus."""

    kind: Literal["tiny"] = Field("tiny", description="Discriminator: built locally by slca.")
    name: str = Field("tiny", description="Option name, used in run names and reports.")
    seed: int = Field(0, ge=0, le=MAX_SEED, description="Seed for tokenizer training and weight initialisation.")
    # Shape caps at the largest released models' (width 16384, 126 layers, MLP 53248, vocabularies of 262144);
    # their product is capped by MAX_TINY_PARAMETERS.
    hidden_size: int = Field(128, ge=8, le=16384, description="Model width.")
    num_layers: int = Field(2, ge=1, le=256, description="Decoder layers.")
    num_heads: int = Field(4, ge=1, le=256, description="Attention heads.")
    num_kv_heads: int = Field(2, ge=1, le=256, description="Key/value heads (grouped-query attention).")
    intermediate_size: int = Field(384, ge=8, le=65536, description="MLP width.")
    vocab_size: int = Field(2000, ge=300, le=262144, description="Target BPE vocabulary size, special tokens included.")
    tie_embeddings: bool = Field(True, description="Share input and output embeddings.")
    tools_block: Literal["qwen", "compact"] = Field("compact", description="How the chat template renders tools: Qwen's JSON schemas or one line per tool.")
    max_position_embeddings: int = Field(2048, ge=64, le=MAX_CONTEXT_TOKENS, description="Longest sequence the model accepts.")
    cache_dir: str = Field(".cache/slca/backbones", description="Where the built model and tokenizer are saved, keyed by their parameters.")

    @model_validator(mode="after")
    def _heads_divide(self) -> TinyBackbone:
        check_heads(self.hidden_size, self.num_heads, self.num_kv_heads)
        if (count := tiny_parameter_count(self)) > MAX_TINY_PARAMETERS:
            raise RuleViolation("hidden_size", f"the tiny backbone would have {count:,} parameters, over the {MAX_TINY_PARAMETERS:,} it may have (built in float32 in memory)")
        return self


def check_heads(hidden_size: int, num_heads: int, num_kv_heads: int) -> None:
    """Attention splits the width into equal heads, and query heads into equal key/value groups."""
    if hidden_size % num_heads:
        raise RuleViolation("num_heads", f"{num_heads} does not divide backbone.hidden_size={hidden_size}")
    if num_heads % num_kv_heads:
        raise RuleViolation("num_kv_heads", f"{num_kv_heads} does not divide backbone.num_heads={num_heads}")


def tiny_parameter_count(cfg: TinyBackbone) -> int:
    """Parameters of the Qwen3 model `init_model` builds (vocab_size is the tokenizer's upper bound)."""
    head_dim = cfg.hidden_size // cfg.num_heads
    attention = 2 * cfg.hidden_size * cfg.hidden_size + 2 * cfg.hidden_size * cfg.num_kv_heads * head_dim + 2 * head_dim
    layer = attention + 3 * cfg.hidden_size * cfg.intermediate_size + 2 * cfg.hidden_size
    embeddings = cfg.vocab_size * cfg.hidden_size * (1 if cfg.tie_embeddings else 2)
    return embeddings + cfg.num_layers * layer + cfg.hidden_size


@BACKBONE_OPTIONS.add
class TinyQwenBackbone(SlcaModel):
    """Qwen's real tokenizer and chat template (fetched by `make real-models`) on a tiny random Qwen2/Qwen3 model."""

    kind: Literal["tiny_qwen"] = Field("tiny_qwen", description="Discriminator: Qwen's tokenizer, weights built locally by slca.")
    name: str = Field("tiny_qwen3", description="Option name, used in run names and reports.")
    qwen: Literal["qwen2.5", "qwen3"] = Field("qwen3", description="Which Qwen: its tokenizer and chat template, and its architecture (Qwen2 for qwen2.5, Qwen3 for qwen3).")
    seed: int = Field(0, ge=0, le=MAX_SEED, description="Seed for weight initialisation.")
    # The embedding alone is Qwen's ~151k-token vocabulary x hidden_size, so the width stays small.
    hidden_size: int = Field(16, ge=8, le=1024, description="Model width.")
    num_layers: int = Field(2, ge=1, le=8, description="Decoder layers.")
    num_heads: int = Field(2, ge=1, le=64, description="Attention heads.")
    num_kv_heads: int = Field(1, ge=1, le=64, description="Key/value heads (grouped-query attention).")
    intermediate_size: int = Field(32, ge=8, le=4096, description="MLP width.")
    max_position_embeddings: int = Field(4096, ge=64, le=MAX_CONTEXT_TOKENS, description="Longest sequence the model accepts.")
    cache_dir: str = Field(".cache/slca/backbones", description="Where the built model and tokenizer are saved, keyed by their parameters and Qwen's tokenizer files.")

    @model_validator(mode="after")
    def _heads_divide(self) -> TinyQwenBackbone:
        check_heads(self.hidden_size, self.num_heads, self.num_kv_heads)
        return self


@BACKBONE_OPTIONS.add
class GgufBackbone(SlcaModel):
    """A pretrained checkpoint fetched as GGUF (`make real-models`), converted once into safetensors and loaded offline."""

    kind: Literal["gguf"] = Field("gguf", description="Discriminator: fetched GGUF weights, converted locally by slca.")
    name: str = Field("smollm2-135m-instruct", description="Option name, used in run names and reports.")
    gguf: str = Field(
        "smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf",
        description="The GGUF file, as listed (with its sha256) in scripts/real_models.sha256, relative to the real-models cache.",
    )
    chat_template: Literal["slca", "own"] = Field(
        "slca", description="Template the tokenizer renders: slca's ChatML + hermes tool markup, or the GGUF's own (no tools, no tool calls)."
    )
    tools_block: Literal["qwen", "compact"] = Field("qwen", description="How slca's template renders tools: Qwen's JSON schemas or one line per tool.")
    max_position_embeddings: int = Field(8192, ge=64, le=MAX_CONTEXT_TOKENS, description="Longest sequence the model accepts (its trained context).")
    cache_dir: str = Field(".cache/slca/backbones", description="Where the converted model and tokenizer are saved, keyed by the GGUF's digest and the template.")

    @model_validator(mode="after")
    def _gguf_in_cache(self) -> GgufBackbone:
        # The file is looked up inside the real-models cache; its digest is checked where it is used.
        parts = self.gguf.replace("\\", "/").split("/")
        if not self.gguf.endswith(".gguf") or self.gguf.startswith("/") or ".." in parts:
            raise RuleViolation("gguf", f"{self.gguf!r} is not a .gguf path relative to the real-models cache")
        return self


@BACKBONE_OPTIONS.add
class HubBackbone(SlcaModel):
    """A pretrained model named by its hub id; loaded only on machines that have its weights."""

    kind: Literal["hub"] = Field("hub", description="Discriminator: a pretrained checkpoint.")
    name: str = Field(..., description="Option name, used in run names and reports.")
    hub_id: str = Field(..., description="Hub id or local path of the checkpoint.")
    chat_template: str = Field(..., description="Chat-template family (`qwen`, `qwen3`, `llama3`), also LLaMA-Factory's template name.")
    max_position_embeddings: int = Field(..., ge=64, le=MAX_CONTEXT_TOKENS, description="Context length the model supports.")


# The union is built from the registered options when first imported (slca/config/options.py).
__getattr__ = BACKBONE_OPTIONS.module_getattr(__name__, "BackboneConfig")
