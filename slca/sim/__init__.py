"""Tool simulators (registry): `schema` (deterministic), `sgls` (LLM endpoint, docs/method.md#tool-simulators), `replay`.

    sim = build_simulator(cfg, tool_schemas=row_tools, row_context={"recorded": [...]})
    obs = sim.respond(ToolCall("search", {"q": "x"}))          # -> Observation(text, kind, truncated)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from slca.sim import replay as _replay  # noqa: F401  (registers "replay")
from slca.sim import schema as _schema  # noqa: F401  (registers "schema")
from slca.sim import sgls as _sgls  # noqa: F401  (registers "sgls")
from slca.sim.base import SIMULATORS, Simulator, Tools, get_simulator, register_simulator
from slca.sim.truncate import truncate_middle
from slca.sim.types import Observation

__all__ = ["SIMULATORS", "Observation", "Simulator", "build_simulator", "get_simulator", "register_simulator",
           "truncate_middle"]


def build_simulator(cfg: Any, *, tool_schemas: Tools = None, row_context: Mapping[str, Any] | None = None
                    ) -> Simulator:
    """The simulator named by `cfg.name` (a SimulatorConfig model, or a mapping validated into one).

    `tool_schemas` (list of schema dicts or its JSON string) and `row_context["recorded"]`
    ([{name, arguments, response}]) are the row defaults; `respond(..., tools=, recorded=)` overrides them.
    """
    if isinstance(cfg, Mapping):
        from pydantic import TypeAdapter

        from slca.config.groups.simulator import SimulatorConfig

        cfg = TypeAdapter(SimulatorConfig).validate_python(dict(cfg))
    return get_simulator(cfg.name)(cfg, tool_schemas=tool_schemas, row_context=row_context)
