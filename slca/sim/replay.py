"""`replay` simulator: only responses recorded in the data; every other call is an error."""

from __future__ import annotations

from collections.abc import Mapping

from slca.sim.base import Simulator, register_simulator
from slca.sim.checks import invalid_format
from slca.sim.types import Call, ObservationKind, ToolSpec, canonical_json


@register_simulator("replay")
class ReplaySimulator(Simulator):
    """Answers a call only when (name, canonical arguments) matches a recorded gold call."""

    def answer(self, call: Call, tools: Mapping[str, ToolSpec], recorded: Mapping[tuple[str, str], str]
               ) -> tuple[str, ObservationKind]:
        if call.arguments is None:
            return invalid_format(call.error or "undecodable arguments"), "error"
        hit = recorded.get((call.name, canonical_json(call.arguments)))
        if hit is None:
            return f"Error: no recorded response exists for tool '{call.name}' with these arguments.", "error"
        return hit, "recorded"
