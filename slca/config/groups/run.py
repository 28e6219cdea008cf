"""The `run` node: identity, seeds, stages and output directory of one run."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from slca.config.base import SlcaModel

Stage = Literal["data", "sft", "rl", "eval"]


class RunConfig(SlcaModel):
    """Where and how one run executes."""

    name: str | None = Field(None, description="Run name; null uses the experiment name.")
    dir: str | None = Field(None, description="Run directory; null uses runs/<experiment>/<UTC timestamp>.")
    seed: int = Field(0, description="Global seed for data order, initialisation and sampling.")
    stages: list[Stage] = Field(default_factory=lambda: ["data", "sft", "rl", "eval"], description="Stages to run, in order.")
    resume: bool = Field(True, description="Skip finished stages and resume interrupted ones found in the run directory.")
