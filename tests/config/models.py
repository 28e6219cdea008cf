"""Walks over the typed config models, for tests that check a property of every field."""

from __future__ import annotations

import typing
from collections.abc import Iterator

from pydantic import BaseModel

from slca.config.spec import Spec


def models_in(annotation: object) -> list[type[BaseModel]]:
    """The config models an annotation can hold (unions, Optional, Annotated and containers opened)."""
    found: list[type[BaseModel]] = []
    stack = [annotation]
    while stack:
        current = stack.pop()
        if isinstance(current, type) and issubclass(current, BaseModel):
            found.append(current)
        stack.extend(typing.get_args(current))
    return found


def every_model(root: type[BaseModel] = Spec) -> Iterator[type[BaseModel]]:
    """Every model reachable from `root` through its fields (every option of every union), once."""
    seen: set[type[BaseModel]] = set()
    stack = [root]
    while stack:
        model = stack.pop()
        if model in seen:
            continue
        seen.add(model)
        yield model
        for info in model.model_fields.values():
            stack.extend(models_in(info.annotation))
