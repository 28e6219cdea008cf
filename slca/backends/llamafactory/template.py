"""Which LLaMA-Factory template a backbone trains with, and the starting model that carries it.

A backbone whose chat template has a family (a hub checkpoint's `backbone.chat_template`, Qwen's own
for tiny_qwen; slca.models says which) trains with LLaMA-Factory's template of that family and keeps
its own tokenizer template, which that family's LLaMA-Factory template reproduces. The tiny
backbone's own template has no LLaMA-Factory twin, so it trains with `qwen` and starts from a
copy of the tiny model whose tokenizer carries `qwen_tools.jinja`, the same layout as a Jinja
template; LLaMA-Factory keeps a tokenizer's template when it saves, so the SFT output (the RL
stage's starting model) renders rollouts exactly as LLaMA-Factory encoded the training data.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

TINY_TEMPLATE = "qwen"
TEMPLATE_PATH = Path(__file__).with_name("qwen_tools.jinja")


def lf_template(spec: Any) -> str:
    """The LLaMA-Factory template name for this spec: backend.template, else the backbone's family."""
    from slca.models.backbones import template_family

    if spec.backend.template:
        return spec.backend.template
    family = template_family(spec.backbone)
    return TINY_TEMPLATE if family is None else family


def qwen_tools_template() -> str:
    """The Jinja source of LLaMA-Factory's `qwen` layout."""
    return TEMPLATE_PATH.read_text(encoding="utf-8")


def with_template(model_dir: Path, out_dir: Path, template: str) -> Path:
    """Copy the model in `model_dir` to `out_dir` with its tokenizer's chat template replaced.

    Written beside its final name and renamed, so an interrupted copy is never taken for a model.
    """
    from transformers import AutoTokenizer

    if out_dir.exists():
        return out_dir
    partial = out_dir.with_name(out_dir.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(model_dir, partial)
    tokenizer = AutoTokenizer.from_pretrained(partial)
    tokenizer.chat_template = template
    tokenizer.save_pretrained(partial)
    partial.rename(out_dir)
    return out_dir
