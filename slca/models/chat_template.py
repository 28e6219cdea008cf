"""The tiny backbone's chat template (ChatML + hermes tool markup) and rendering with assistant spans.

The Jinja source lives beside this module in `chat_template.jinja`; its default tools block
(`qwen` or `compact`) is fixed when a backbone is built and can be overridden per call with the
`tools_block` template variable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any


TEMPLATE_PATH = Path(__file__).with_name("chat_template.jinja")
TOOLS_BLOCKS = ("qwen", "compact")
_DEFAULT_SLOT = "@@DEFAULT_TOOLS_BLOCK@@"

# Fallback for templates without generation tags (hub models): an assistant span is everything
# after the role header up to and including the turn's <|im_end|>.
_CHATML_ASSISTANT = re.compile(r"<\|im_start\|>assistant\n(.*?<\|im_end\|>)", re.DOTALL)


def template_source(tools_block: str = "compact") -> str:
    """The Jinja chat template with `tools_block` as its default tools rendering."""
    if tools_block not in TOOLS_BLOCKS:
        raise ValueError(f"tools_block must be one of {TOOLS_BLOCKS}, got {tools_block!r}")
    return TEMPLATE_PATH.read_text(encoding="utf-8").replace(_DEFAULT_SLOT, tools_block)


def render(
    messages: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]] | None = None,
    *,
    template: str,
    add_generation_prompt: bool = False,
    **template_vars: Any,
) -> str:
    """Render one conversation to text with `template` (no tokenizer needed)."""
    return render_with_spans(messages, tools, template=template, add_generation_prompt=add_generation_prompt, **template_vars)[0]


def render_with_spans(
    messages: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]] | None = None,
    *,
    template: str,
    add_generation_prompt: bool = False,
    **template_vars: Any,
) -> tuple[str, list[tuple[int, int]]]:
    """Render one conversation; also return the assistant spans as half-open character ranges.

    Spans come from the template's `{% generation %}` tags when it has them, else from the
    ChatML layout (assistant header to `<|im_end|>` inclusive).
    """
    from transformers.utils.chat_template_utils import render_jinja_template

    tagged = "generation" in template and re.search(r"\{%-?\s*generation\s*-?%\}", template) is not None
    texts, indices = render_jinja_template(
        conversations=[list(messages)],
        tools=list(tools) if tools else None,
        chat_template=template,
        return_assistant_tokens_mask=tagged,
        add_generation_prompt=add_generation_prompt,
        **template_vars,
    )
    text = texts[0]
    if tagged:
        spans = [(int(s), int(e)) for s, e in indices[0]]
    else:
        spans = [(m.start(1), m.end(1)) for m in _CHATML_ASSISTANT.finditer(text)]
    return text, spans


