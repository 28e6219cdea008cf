"""`schema` simulator: deterministic, schema-guided answers with no model behind them."""

from __future__ import annotations

from collections.abc import Mapping

from slca.sim.base import Simulator, register_simulator
from slca.sim.checks import precheck
from slca.sim.synth import synthesise
from slca.sim.types import Call, ObservationKind, ToolSpec, canonical_json


@register_simulator("schema")
class SchemaSimulator(Simulator):
    """Errors for bad calls (unknown tool, bad arguments, missing/mistyped parameters); otherwise the
    recorded response of a matching gold call, else a JSON response synthesised from the call's hash."""

    def answer(self, call: Call, tools: Mapping[str, ToolSpec], recorded: Mapping[tuple[str, str], str]
               ) -> tuple[str, ObservationKind]:
        error = precheck(call, tools, check_types=True)
        if error is not None:
            return error, "error"
        hit = recorded.get((call.name, canonical_json(call.arguments)))
        if hit is not None:
            return hit, "recorded"
        return synthesise(tools[call.name], call.arguments, self.cfg.seed), "synthesised"
