"""The `run` node: identity, seeds, stages and output directory of one run."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from slca.config.base import RuleViolation, SlcaModel, plain_name
from slca.config.limits import MAX_SEED

Stage = Literal["data", "sft", "curate", "rl", "eval"]
STAGE_ORDER: tuple[str, ...] = ("data", "sft", "curate", "rl", "eval")
# Old stage name -> its name now: a stage list spelt the old way is refused naming the new one.
RENAMED_STAGES = {"filter": "curate"}


class RunConfig(SlcaModel):
    """Where and how one run executes."""

    name: str | None = Field(None, description="Run name (a plain name, no path separators); null uses the experiment name.")
    dir: str | None = Field(None, description="Run directory; null uses runs/<experiment>/<UTC timestamp>.")
    seed: int = Field(0, ge=0, le=MAX_SEED, description="Global seed for data order, initialisation and sampling.")
    stages: list[Stage] = Field(
        default_factory=lambda: ["data", "sft", "rl", "eval"], min_length=1, description="Stages to run: a non-empty subset of data, sft, curate, rl, eval in that order."
    )
    resume: bool = Field(True, description="Skip finished stages and resume interrupted ones found in the run directory.")

    @field_validator("name")
    @classmethod
    def _plain(cls, value: str | None) -> str | None:
        return plain_name(value, "run name")

    @field_validator("stages", mode="before")
    @classmethod
    def _refuse_renamed(cls, value: object) -> object:
        for i, stage in enumerate(value if isinstance(value, list) else ()):
            if isinstance(stage, str) and stage in RENAMED_STAGES:
                raise RuleViolation(str(i), f"stage {stage} renamed to {RENAMED_STAGES[stage]}")
        return value

    @field_validator("stages")
    @classmethod
    def _canonical_order(cls, value: list[str]) -> list[str]:
        # Each stage consumes the previous one's outputs: a later stage listed first cannot run.
        if len(set(value)) != len(value):
            raise RuleViolation("", f"stage listed twice in {value}; each stage runs once")
        if value != sorted(value, key=STAGE_ORDER.index):
            raise RuleViolation("", f"{value} is out of order; stages run in the order {', '.join(STAGE_ORDER)}")
        return value
