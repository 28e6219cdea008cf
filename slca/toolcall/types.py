"""Value types shared by the tool-call parsers and everything that scores parsed calls."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call: a name and its JSON-decoded arguments ({} when absent or falsy)."""

    name: str
    arguments: dict[str, Any]

    def key(self) -> tuple[str, str]:
        """Hashable canonical form (name, `canonical_json` of arguments), for multiset comparisons."""
        return self.name, canonical_json(self.arguments)


def canonical_json(value: Any) -> str:
    """Sorted-key JSON of a decoded value, for equality tests (1 and 1.0 differ); never raises.

    Values json cannot sort or write (keys of mixed types from a Python-literal call, ints past
    the decimal-conversion limit, nesting past the recursion limit) take a slower exact form.
    """
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        try:
            return json.dumps(_plain(value), ensure_ascii=False, default=str)
        except RecursionError:
            return f"<too deep {id(value)}>"  # equal only to itself; parsers cap depth long before this


def _plain(value: Any) -> Any:
    """`value` with dicts as key-sorted [key, value] pair lists (keys as json would write them)
    and huge ints in hex (not subject to the decimal-conversion limit)."""
    if isinstance(value, dict):
        pairs = [[_key(k), _plain(v)] for k, v in value.items()]
        pairs.sort(key=lambda kv: (kv[0], json.dumps(kv[1], ensure_ascii=False, default=str)))
        return {"<dict>": pairs}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            str(value)
        except ValueError:
            return {"<int>": hex(value)}
    return value


def _key(k: Any) -> str:
    """A dict key as json writes it (True -> "true", None -> "null", 1 -> "1")."""
    if isinstance(k, str):
        return k
    try:
        return json.dumps(k, default=str)
    except ValueError:
        return hex(k) if isinstance(k, int) else repr(k)


@dataclass(frozen=True, slots=True)
class Block:
    """One `<tool_call>…</tool_call>` block; `calls` is None when the block is invalid.

    `step` counts the `<tool_response>` tags before the block: the blocks of one assistant turn share
    it, so a turn's parallel calls are one block holding a list or one block per call (as Qwen writes).
    """

    raw: str
    calls: tuple[ToolCall, ...] | None
    error: str | None = None
    step: int = 0

    @property
    def valid(self) -> bool:
        return self.calls is not None


@dataclass(frozen=True, slots=True)
class ParseResult:
    """Outcome of parsing one model response.

    `n_open`/`n_close` count the opening/closing tags after thinking is stripped; `error` is a
    whole-input error kind (e.g. "too_large"), in which case nothing was parsed or counted.
    """

    blocks: tuple[Block, ...]
    n_open: int
    n_close: int
    error: str | None = None

    @property
    def calls(self) -> list[ToolCall]:
        """All calls of the valid blocks, flattened in order."""
        return [c for b in self.blocks if b.calls is not None for c in b.calls]

    @property
    def calls_by_block(self) -> list[tuple[ToolCall, ...]]:
        """The calls of each valid block (invalid blocks are skipped)."""
        return [b.calls for b in self.blocks if b.calls is not None]

    @property
    def n_valid(self) -> int:
        return sum(1 for b in self.blocks if b.calls is not None)

    @property
    def denom(self) -> int:
        """max(n_open, n_close): the format-score denominator of docs/method.md#format-check."""
        return max(self.n_open, self.n_close)

    @property
    def first_error(self) -> str | None:
        """The first invalid block's error kind, or None when every block is valid."""
        for b in self.blocks:
            if b.error is not None:
                return b.error
        return None
