"""The backend registry, owned by the config layer: composing a spec asks the chosen backend what it
refuses and which rules it adds without the config layer importing, or naming, any backend.

Each backend registers its one object here (`slca.backends.contract.register_backend`) from the module
that installed packages name under the `slca.backends` entry points (pyproject.toml); those modules are
imported the first time composition asks. The config layer sees a backend only as `SpecRules`.

A spec here is the composed `slca.config.spec.Spec`; that module imports this one, so it is not named
(not even for type checking): an import circle in name only is still read as one.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Any, Protocol

from slca.registry import Registry

ENTRY_POINT_GROUP = "slca.backends"


class SpecRules(Protocol):
    """What composition asks of a backend (`slca.backends.contract.Backend` is the one implementation)."""

    @property
    def name(self) -> str: ...

    def honours_path(self, path: str) -> bool:
        """Whether the backend takes the dotted spec `path` into account."""
        ...

    def check(self, spec: Any, others: Sequence[SpecRules]) -> None:
        """Refuse (RuleViolation) a field it does not honour set to a non-default value, naming which of
        `others` honour it; then apply its own cross-field rules."""
        ...


BACKENDS: Registry[SpecRules] = Registry("backend")


def installed_backends() -> list[SpecRules]:
    """Every backend, after importing the modules named under the `slca.backends` entry points (each
    registers its backend on first import; a later import is Python's cached module)."""
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        entry.load()
    return [backend for _, backend in BACKENDS.items()]


def check_spec(spec: Any) -> None:
    """The chosen backend's refusals and rules (raises `RuleViolation`)."""
    backends = installed_backends()
    if spec.backend.name not in BACKENDS:
        # Every `backend` option is a backend slca ships: an install whose entry points predate it is stale.
        raise RuntimeError(
            f"no installed package registers backend {spec.backend.name!r} under the {ENTRY_POINT_GROUP!r} entry points "
            f"(registered: {', '.join(BACKENDS.names()) or 'none'}); reinstall slca (pip install -e .)"
        )
    chosen = BACKENDS.get(spec.backend.name)
    chosen.check(spec, [backend for backend in backends if backend is not chosen])
