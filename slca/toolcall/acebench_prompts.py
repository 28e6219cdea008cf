"""ACEBench's default prompts (docs/eval.md#table-3-acebench): the system prompt of each data kind and the
user turn, as ACEBench's own inference formats them for an English entry.

The texts are kept as data under conf/prompts/acebench_*.md, byte for byte as ACEBench's
`model_inference/prompt_en.py` (commit named in third_party/acebench/VENDORED.md) defines them.
ACEBench fills them with Python's `str.format`, so the function list appears as Python's `str()`
of the list of schema dicts (not JSON); that quirk is kept.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

PROMPT_DIR = Path(__file__).resolve().parents[2] / "conf" / "prompts"
# Data kind -> conf/prompts file; ACEBench picks the kind from the category name.
KINDS: dict[str, str] = {"normal": "acebench_normal", "preference": "acebench_preference", "special": "acebench_special"}
USER_FILE = "acebench_user"
_SLOT = re.compile(r"\{(function|time|profile|question)\}")


@functools.lru_cache(maxsize=None)
def _text(stem: str) -> str:
    return (PROMPT_DIR / f"{stem}.md").read_text(encoding="utf-8")


def _fill(template: str, values: Mapping[str, str]) -> str:
    # One pass, like str.format: a value that itself holds "{time}" is not filled again.
    return _SLOT.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def kind_of(category: str) -> str:
    """The prompt kind ACEBench uses for a category: special, preference or normal (its own test order)."""
    if "special" in category:
        return "special"
    return "preference" if "preference" in category else "normal"


def system_prompt(kind: str, functions: Sequence[Any], *, time: str = "", profile: str = "") -> str:
    """ACEBench's system prompt of `kind` over `functions` (schema dicts, shown as Python's str())."""
    return _fill(_text(KINDS[kind]), {"function": str(list(functions)), "time": time, "profile": profile})


def user_prompt(question: str) -> str:
    """ACEBench's user turn: the entry's conversation history under its heading."""
    return _fill(_text(USER_FILE), {"question": question})


def is_acebench_prompt(text: str | None) -> bool:
    """Whether `text` is one of ACEBench's system prompts (it starts as one of them does)."""
    return bool(text) and any(text.startswith(_text(stem).split("\n", 1)[0]) for stem in KINDS.values())  # type: ignore[union-attr]
