"""Where the reference sample rows live: `tests/fixtures/reference/` (see its README for source and licence)."""

from __future__ import annotations

from pathlib import Path

SAMPLES = Path(__file__).resolve().parent / "fixtures" / "reference"
RL_PREVIEW = SAMPLES / "toucan_toolcall_rl.preview.jsonl"
SFT_PREVIEW = SAMPLES / "toucan_toolcall_sft.preview.jsonl"
DATASET_INFO = SAMPLES / "dataset_info.json"
