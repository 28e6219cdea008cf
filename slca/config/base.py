"""Base class for every typed config model: unknown keys are errors, assignments are validated."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SlcaModel(BaseModel):
    """A config node. Each field carries a type, a default and a one-line `description`."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_attribute_docstrings=False)
