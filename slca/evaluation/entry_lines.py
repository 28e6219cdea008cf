"""Benchmark data files of one JSON object per line, each with a string `id` (BFCL's and ACEBench's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_entry_lines(path: Path, error: type[Exception]) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of every non-blank line; a file that cannot be read, a line that is not
    JSON or an object without a string id raises `error` naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise error(f"{path}:{n}: invalid JSON ({' '.join(str(exc).split())})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
            raise error(f"{path}:{n}: id: expected an object with a string id")
        out.append((n, obj))
    return out
