"""Tool-call text core: parsers, segment masks, chat templates and system prompts.

The parsers are imported eagerly (stdlib only); names that need torch or transformers are
resolved lazily on first access so `import slca.toolcall` stays cheap.
"""

from __future__ import annotations

from slca.lazy import lazy_getattr
from slca.toolcall.parse import parse_hermes, parse_pythonic, strip_thinking
from slca.toolcall.types import Block, ParseResult, ToolCall

_LAZY = {
    "segment_runs": "slca.toolcall.segments",
    "split_segments": "slca.toolcall.segments",
    "split_spans": "slca.toolcall.segments",
    "render": "slca.toolcall.templates",
    "render_chatml": "slca.toolcall.templates",
    "history_as_context": "slca.toolcall.templates",
    "PromptSpec": "slca.toolcall.prompts",
    "get_system_prompt": "slca.toolcall.prompts",
    "register_prompt": "slca.toolcall.prompts",
    "PROMPTS": "slca.toolcall.prompts",
}

__all__ = [
    "Block",
    "ParseResult",
    "ToolCall",
    "parse_hermes",
    "parse_pythonic",
    "strip_thinking",
    *_LAZY,
]


__getattr__ = lazy_getattr(__name__, _LAZY)
