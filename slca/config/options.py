"""The option models of one config group: each model registers itself where it is defined, and the
group's discriminated union is built from the registered models the first time it is asked for.

A new option is therefore its model, registered (`@ESTIMATOR_OPTIONS.add`), its YAML and its
function in the plug point's own registry above this layer (`slca.algos`, `slca.rewards`, `slca.sim`,
`slca.models`, the backends, the launchers); no union is edited anywhere. Each such registry holds
exactly the names of its group's options (tests/config/test_option_registries.py).

The union is built on first use, normally when `slca.config.spec` is imported, so a plug-in outside
this package registers its model before that import; a registration after the union was built would
be silently missing from it and is refused instead.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Annotated, Any, Union

from pydantic import BaseModel, Field

from slca.registry import Registry


class Options(Registry[type[BaseModel]]):
    """Registry of one config group's option models, keyed by the values of their tag field (`name`,
    or `kind` for backbones; a model whose tag is `Literal["a", "b"]` is registered under both)."""

    def __init__(self, group: str, tag: str = "name") -> None:
        super().__init__(f"{group} option")
        self.group = group
        self.tag = tag
        self._union: Any = None

    def register(self, name: str) -> Callable[[type[BaseModel]], type[BaseModel]]:
        if self._union is not None:
            raise ValueError(f"{self.kind} {name!r} registered after the {self.group} union was built: "
                             f"register it before slca.config.spec is imported")
        return super().register(name)

    def add(self, model: type[BaseModel]) -> type[BaseModel]:
        """Class decorator registering `model` under every value its tag field's Literal allows."""
        for value in typing.get_args(model.model_fields[self.tag].annotation):
            self.register(value)(model)
        return model

    def models(self) -> tuple[type[BaseModel], ...]:
        """The registered models, each once, in registration order (the union's order, which the JSON
        schema and `slca config docs` follow)."""
        return tuple(dict.fromkeys(self._entries.values()))

    def union(self) -> Any:
        """`Annotated[Union[<models>], Field(discriminator=<tag>)]`, built once; later registrations are refused."""
        if self._union is None:
            self._union = Annotated[Union[self.models()], Field(discriminator=self.tag)]  # noqa: UP007  (a tuple of types)
        return self._union

    def module_getattr(self, module: str, union_name: str) -> Callable[[str], Any]:
        """A module-level `__getattr__` exporting the union as `union_name`, built when first imported."""

        def __getattr__(name: str) -> Any:
            if name == union_name:
                return self.union()
            raise AttributeError(f"module {module!r} has no attribute {name!r}")

        return __getattr__
