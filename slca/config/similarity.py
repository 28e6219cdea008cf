"""Options of `slca data similarity` (the efficiency paper's Table 7; docs/eval.md#table-7-traintest-similarity)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from slca.config.base import SlcaModel
from slca.config.limits import MAX_ROWS, Seed


class SimilarityOptions(SlcaModel):
    """How two prompt sets are embedded and compared."""

    encoder: str = Field(..., min_length=1, description="Local sentence-transformers model directory (the paper used sentence-BERT); nothing is downloaded.")
    text: Literal["user_turns", "first_user"] = Field("user_turns", description="Text embedded per prompt: every user message joined by a newline, or the first one.")
    max_prompts: int | None = Field(None, ge=2, le=MAX_ROWS, description="Prompts embedded per set at most, drawn uniformly without replacement; null embeds all (pair statistics are exact either way).")
    seed: Seed = Field(0, description="Seed of the draw when max_prompts samples a set.")
    batch_size: int = Field(64, ge=1, le=65_536, description="Prompts embedded per encoder batch.")
    max_seq_length: int | None = Field(None, ge=1, le=1_000_000, description="Tokens per prompt the encoder reads at most (longer ones truncated); null keeps the encoder's own limit.")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="Device of the encoder (auto: cuda when available).")
