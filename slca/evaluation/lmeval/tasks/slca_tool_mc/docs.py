"""The documents of slca_tool_mc, read from the file beside this one (the harness's `custom_dataset` hook, so
the data path does not depend on the working directory and nothing is fetched or cached)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().with_name("slca_tool_mc.jsonl")


def load(**_metadata: Any) -> Any:
    import datasets

    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})
