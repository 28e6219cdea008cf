"""An upper bound on a text's token count, without tokenising it, for the tokenizers whose pipeline gives one.

A BPE model emits at least one symbol of its input per id (a merge covers one symbol or more; an
unknown symbol becomes at most its UTF-8 bytes with byte fallback, else one unknown id or none), and an
added token covers at least one character. Its symbols are characters, or bytes under a byte-level
pre-tokenizer, so when nothing before the model adds characters a text's ids number at most the UTF-8
bytes of its normalised form. The pre-tokenizers allowed here only cut the text (or drop parts of it),
or map each byte to one symbol (byte level without a prefix space). The normalisers allowed are none
and NFC, which leaves ASCII as it is and at most triples any text's UTF-8 bytes (Unicode's
normalisation FAQ, "maximum expansion factors"; tests/models/test_token_bound.py checks every code point).

The rollout loop uses it to skip tokenising prompts the cap cannot bind, when nothing reads their ids.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

# Pre-tokenizers that only cut the text into pieces or drop some of it: they add no character.
_CUTTING = frozenset({"Split", "Digits", "Punctuation", "Whitespace", "WhitespaceSplit", "CharDelimiterSplit",
                      "UnicodeScripts"})


def utf8_bytes(text: str) -> int:
    """The UTF-8 length of `text` (lone surrogates counted as their 3 bytes)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def nfc_bytes_bound(text: str) -> int:
    """At least the UTF-8 length of any piece-wise NFC normalisation of `text`: NFC changes no ASCII text
    and at most triples the rest."""
    return len(text) if text.isascii() else 3 * len(text.encode("utf-8", "surrogatepass"))


def _state(component: Any) -> dict[str, Any] | None:
    """A tokenizers pipeline component as its serialised settings (None for an absent one)."""
    return None if component is None else json.loads(component.__getstate__())


def _adds_nothing(pre: dict[str, Any] | None) -> bool:
    if pre is None:
        return True
    kind = pre.get("type")
    if kind == "Sequence":
        return all(_adds_nothing(p) for p in pre.get("pretokenizers", ()))
    if kind == "ByteLevel":
        return pre.get("add_prefix_space") is False
    return kind in _CUTTING


def _bytes_after(norm: dict[str, Any] | None) -> Callable[[str], int] | None:
    """A bound on the UTF-8 bytes of a text after normaliser `norm` (none, NFC, or a sequence of them); None for any other."""
    if norm is None:
        return utf8_bytes
    if norm.get("type") == "Sequence":
        bounds = [_bytes_after(n) for n in norm.get("normalizers", ())]
        return None if None in bounds else nfc_bytes_bound if nfc_bytes_bound in bounds else utf8_bytes
    return nfc_bytes_bound if norm.get("type") == "NFC" else None


def token_bound(tokenizer: Any) -> Callable[[str], int] | None:
    """A function of a text that is at least the number of ids `tokenizer` encodes it to (no special tokens
    added), or None when the tokenizer's pipeline gives no such bound (not a fast BPE tokenizer, another
    normaliser, or a pre-tokenizer that may add characters)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or type(backend.model).__name__ != "BPE":
        return None
    try:
        norm, pre = _state(backend.normalizer), _state(backend.pre_tokenizer)
    except (AttributeError, TypeError, ValueError):  # a component that does not serialise: no bound claimed
        return None
    return _bytes_after(norm) if _adds_nothing(pre) else None
