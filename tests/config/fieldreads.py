"""Record which config fields the code reads: a `__getattribute__` hook on SlcaModel, on only inside
`recording_reads()` (tests only; production models keep pydantic's own attribute access).

A read counts when the line that reads the field lives in the slca package but outside the config
models themselves (validators and spec I/O read every field without giving it a meaning).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel

from slca.config.base import SlcaModel
from slca.config.spec import Spec
from tests.config.models import every_model

SLCA = str(Path(__file__).resolve().parents[2] / "slca") + "/"
NOT_A_USE = tuple(SLCA + p for p in ("config/base.py", "config/spec.py", "config/groups/", "config/compose.py", "config/io.py", "config/docs.py"))


@contextmanager
def recording_reads() -> Iterator[set[str]]:
    """Yield the set that fills with "Model.field" for every field read by slca code meanwhile."""
    reads: set[str] = set()
    getattribute = object.__getattribute__

    def hook(self: object, name: str) -> object:
        if name in type(self).__pydantic_fields__:  # type: ignore[attr-defined]
            caller = sys._getframe(1).f_code.co_filename
            if caller.startswith(SLCA) and not caller.startswith(NOT_A_USE):
                reads.add(f"{type(self).__name__}.{name}")
        return getattribute(self, name)

    SlcaModel.__getattribute__ = hook  # type: ignore[method-assign]
    try:
        yield reads
    finally:
        del SlcaModel.__getattribute__


def all_fields(root: type[BaseModel] = Spec) -> set[str]:
    """Every "Model.field" reachable from `root` (every option of every union)."""
    return {f"{model.__name__}.{name}" for model in every_model(root) for name in model.model_fields}
