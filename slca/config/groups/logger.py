"""`logger` group: experiment tracking besides the always-written metrics.jsonl."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from slca.config.base import SlcaModel
from slca.config.options import Options


LOGGER_OPTIONS = Options("logger")


@LOGGER_OPTIONS.add
class WandbLogger(SlcaModel):
    """Weights & Biases; offline unless the user sets mode=online."""

    name: Literal["wandb"] = Field("wandb", description="Option name.")
    project: str = Field("slca", description="W&B project.")
    entity: str | None = Field(None, description="W&B entity (team or user).")
    mode: Literal["offline", "online", "disabled"] = Field("offline", description="offline writes under the run dir; online syncs.")
    group: str | None = Field(None, description="W&B group (e.g. a sweep name).")
    tags: list[str] = Field(default_factory=list, description="W&B tags.")


@LOGGER_OPTIONS.add
class NoLogger(SlcaModel):
    """metrics.jsonl only."""

    name: Literal["none"] = Field("none", description="Option name.")


# The union is built from the registered options when first imported (slca/config/options.py).
__getattr__ = LOGGER_OPTIONS.module_getattr(__name__, "LoggerConfig")
