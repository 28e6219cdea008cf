"""A resumable on-disk record of per-prompt rollout outcomes, one JSON line per finished batch.

The key of a batch covers everything its outcomes depend on (policy, rollout, simulator and reward
settings, the batch's seed and its rows' content), so an interrupted curation continues where it
stopped and a rerun makes no generator call. Lines are appended and fsynced one batch at a time;
a line torn by a kill mid-write is ignored on reading and its batch is simply redone.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

FILE_NAME = "outcomes.jsonl"


def digest(*parts: Any) -> str:
    """sha256 of the canonical JSON of `parts` (non-JSON values by their str)."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class OutcomeCache:
    """key -> list of per-prompt outcomes (a success count, or a drop reason) of one batch."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.path = Path(directory) / FILE_NAME
        self._entries: dict[str, list[Any]] = {}
        if self.path.is_file():
            with open(self.path, encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    try:
                        entry = json.loads(line)
                        self._entries[str(entry["key"])] = list(entry["outcomes"])
                    except (ValueError, KeyError, TypeError):
                        continue  # a torn last line: that batch is redone

    def get(self, key: str) -> list[Any] | None:
        return self._entries.get(key)

    def put(self, key: str, outcomes: list[Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"key": key, "outcomes": outcomes}, separators=(",", ":")) + "\n"
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        self._entries[key] = outcomes
