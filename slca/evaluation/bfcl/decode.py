"""Model text → tool calls for BFCL scoring, with slca's own parsers (docs/bfcl.md#what-the-checker-accepts).

Two formats are accepted, so that every system prompt of the protocol grid can be scored: a
hermes `<tool_call>` JSON block (what the chat template asks for when the prompt does not show the
tools) and BFCL's pythonic call list (what the `bfcl_default` prompt asks for). Nothing is
evaluated: the pythonic form goes through `ast` and literals only.
"""

from __future__ import annotations

from dataclasses import dataclass

from slca.toolcall import parse_hermes, parse_pythonic, strip_thinking
from slca.toolcall.parse import OPEN_TAG
from slca.toolcall.types import ToolCall

NOT_TEXT = "not_text"
UNCLOSED = "unclosed_tool_call"


@dataclass(frozen=True)
class Decoded:
    """The calls read from one model output (empty when it made none), or why it could not be read."""

    calls: tuple[ToolCall, ...]
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def decode(text: object) -> Decoded:
    """Read every call in `text`: hermes blocks when a `<tool_call>` tag is present, else a pythonic list.

    Thinking blocks are dropped first. One unreadable block makes the whole output unreadable
    (BFCL's decoder also fails on any malformed part). Never raises.
    """
    if not isinstance(text, str):
        return Decoded((), NOT_TEXT)
    body = strip_thinking(text)
    if OPEN_TAG in body:
        res = parse_hermes(body)
        if res.error is not None:
            return Decoded((), res.error)
        if not res.blocks:
            return Decoded((), UNCLOSED)
        err = res.first_error
        return Decoded((), err) if err is not None else Decoded(tuple(res.calls))
    res = parse_pythonic(body)
    if res.error is not None:
        return Decoded((), res.error)
    err = res.first_error
    return Decoded((), err) if err is not None else Decoded(tuple(res.calls))
