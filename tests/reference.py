"""Where the reference sample rows live: `shared/reference/samples` beside the checkout (read in place)."""

from __future__ import annotations

from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "reference" / "samples"
RL_PREVIEW = SAMPLES / "toucan_toolcall_rl.preview.jsonl"
SFT_PREVIEW = SAMPLES / "toucan_toolcall_sft.preview.jsonl"

if not RL_PREVIEW.is_file():
    raise FileNotFoundError(f"reference samples not found at {SAMPLES}: the tests expect ../shared beside the checkout")
