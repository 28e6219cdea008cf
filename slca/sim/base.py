"""Simulator base class and registry: one entry per `simulator` config option."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

from slca.registry import Registry
from slca.sim.truncate import truncate_middle
from slca.sim.types import Call, Observation, ObservationKind, ToolSpec, as_call, index_recorded, index_tools

Tools = Sequence[Mapping[str, Any]] | str | None
Recorded = Iterable[Mapping[str, Any]] | None


class Simulator(ABC):
    """Answers tool calls for one row (or for any row when tools are passed per call).

    `tool_schemas`/`row_context["recorded"]` given at construction are the defaults; `tools=` and
    `recorded=` passed to `respond` replace them for that call. Never raises on bad calls: every
    problem becomes an error observation. Instances are safe to share between threads.
    """

    name: ClassVar[str]

    def __init__(self, cfg: Any, *, tool_schemas: Tools = None, row_context: Mapping[str, Any] | None = None):
        self.cfg = cfg
        self._tools = index_tools(tool_schemas)
        self._recorded = index_recorded((row_context or {}).get("recorded"))

    @abstractmethod
    def answer(self, call: Call, tools: Mapping[str, ToolSpec], recorded: Mapping[tuple[str, str], str]
               ) -> tuple[str, ObservationKind]:
        """(text, kind) for one normalised call, before the length cap."""

    def _context(self, tools: Tools, recorded: Recorded):
        return (self._tools if tools is None else index_tools(tools),
                self._recorded if recorded is None else index_recorded(recorded))

    def _finish(self, text: str, kind: ObservationKind) -> Observation:
        capped, truncated = truncate_middle(text, self.cfg.max_response_chars)
        return Observation(text=capped, kind=kind, truncated=truncated, n_chars=len(text))

    def respond(self, call: Any, *, tools: Tools = None, recorded: Recorded = None) -> Observation:
        """Observation for one call: a ToolCall-like object or a {name, arguments} dict."""
        tool_index, recorded_index = self._context(tools, recorded)
        return self._finish(*self.answer(as_call(call), tool_index, recorded_index))

    def respond_many(self, calls: Sequence[Any], *, tools: Tools = None, recorded: Recorded = None
                     ) -> list[Observation]:
        """Observations for one turn's parallel calls, in call order."""
        tool_index, recorded_index = self._context(tools, recorded)
        return [self._finish(*self.answer(as_call(c), tool_index, recorded_index)) for c in calls]


SIMULATORS: Registry[type[Simulator]] = Registry("simulator")


def register_simulator(name: str) -> Callable[[type[Simulator]], type[Simulator]]:
    """Class decorator adding a simulator under `name` (and setting `cls.name`); duplicates raise."""

    def deco(cls: type[Simulator]) -> type[Simulator]:
        SIMULATORS.register(name)(cls)  # raises before the class is touched on a duplicate
        cls.name = name
        return cls

    return deco


def get_simulator(name: str) -> type[Simulator]:
    """The simulator class registered under `name` (KeyError listing the known names)."""
    return SIMULATORS.get(name)
