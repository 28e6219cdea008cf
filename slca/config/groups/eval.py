"""`eval` group: the evaluation protocol and the fragility factors it controls."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from slca.config.base import SlcaModel


class EvalConfig(SlcaModel):
    """Evaluation over a grid of seeds x template x thinking x system prompt, reported as mean +- std."""

    name: str = Field("default", description="Option name.")
    seeds: list[int] = Field(default_factory=lambda: [0], description="Sampling seeds; metrics are mean +- std over them.")
    templates: list[Literal["native", "context"]] = Field(default_factory=lambda: ["native"], description="Chat-template constructions to evaluate.")
    thinking: list[Literal["keep", "drop"]] = Field(default_factory=lambda: ["keep"], description="Thinking-history retention settings.")
    system_prompts: list[str] = Field(
        default_factory=lambda: ["dataset"], description="System prompts: dataset, dataset_template, bfcl_default, stronger, none or a file path."
    )
    temperature: float = Field(0.0, ge=0.0, description="Sampling temperature (0 = greedy).")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    max_samples: int | None = Field(None, ge=1, description="Rows evaluated at most; null evaluates all.")
    success_threshold: float = Field(0.9, description="Success@t threshold on the normalised score.")
    model_dir: str | None = Field(None, description="Evaluate this checkpoint instead of the run's trained policies.")
    split: str = Field("eval", description="Split of the data stage to evaluate on.")
