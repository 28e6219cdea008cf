"""The backbone-kind registry: the one place that turns a `backbone` option into its model directory
(weights, tokenizer and chat template together) and says which chat-template family it renders.

Every backend, curation and evaluation ask here; none of them tests `backbone.kind`. The
built-in kinds register from their own modules (BUILTIN_MODULES), imported on first look-up; each
imports torch and transformers only when it builds.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Callable

from slca.registry import Registry

# The run's SFT rows, read only by kinds whose build depends on them (the tiny tokenizer's corpus).
SftRows = Callable[[], Iterable[Any]]


@dataclass(frozen=True)
class BackboneKind:
    """One `backbone.kind`.

    `model_dir(cfg, sft_rows)`: a directory (absolute) or hub id that `from_pretrained` loads offline.
    `template_family(cfg)`: the chat-template family its tokenizer renders (`qwen`, `qwen3`, `llama3`:
    also LLaMA-Factory's template name), or None for slca's own template, which has no such twin.
    """

    kind: str
    model_dir: Callable[[Any, SftRows], str]
    template_family: Callable[[Any], str | None]


BACKBONE_KINDS: Registry[BackboneKind] = Registry("backbone kind")
BUILTIN_MODULES: tuple[str, ...] = ("slca.models.tiny", "slca.models.tiny_qwen", "slca.models.gguf", "slca.models.hub")


def register_kind(entry: BackboneKind) -> BackboneKind:
    """Add `entry` under its kind; a second registration of a kind is an error."""
    return BACKBONE_KINDS.register(entry.kind)(entry)


def backbone_kind(kind: str) -> BackboneKind:
    """The registered kind called `kind` (KeyError listing the known ones)."""
    for module in BUILTIN_MODULES:
        importlib.import_module(module)  # registers on first import; later imports are cached
    return BACKBONE_KINDS.get(kind)


def backbone_dir(cfg: Any, sft_rows: SftRows) -> str:
    """The model directory (or hub id) of the backbone option `cfg`, built first when its kind builds."""
    return backbone_kind(cfg.kind).model_dir(cfg, sft_rows)


def template_family(cfg: Any) -> str | None:
    """The chat-template family the backbone option `cfg` renders; None for slca's own template."""
    return backbone_kind(cfg.kind).template_family(cfg)
