"""`logger` group: experiment tracking besides the always-written metrics.jsonl."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field

from slca.config.base import SlcaModel


class WandbLogger(SlcaModel):
    """Weights & Biases; offline unless the user sets mode=online."""

    name: Literal["wandb"] = Field("wandb", description="Option name.")
    project: str = Field("slca", description="W&B project.")
    entity: str | None = Field(None, description="W&B entity (team or user).")
    mode: Literal["offline", "online", "disabled"] = Field("offline", description="offline writes under the run dir; online syncs.")
    group: str | None = Field(None, description="W&B group (e.g. a sweep name).")
    tags: list[str] = Field(default_factory=list, description="W&B tags.")


class NoLogger(SlcaModel):
    """metrics.jsonl only."""

    name: Literal["none"] = Field("none", description="Option name.")


LoggerConfig = Annotated[Union[WandbLogger, NoLogger], Field(discriminator="name")]
