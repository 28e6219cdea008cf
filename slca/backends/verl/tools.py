"""slca's tool simulators as one verl `BaseTool` (docs/method.md#tool-simulators).

The reference registers a single wildcard tool and routes every call the policy makes to it, by
name, against the calling row's own tool schemas; here that tool wraps the spec's simulator
(`schema`, `sgls` or `replay`, from slca's simulator registry). Its lifecycle is verl's:
`create` binds an instance to one row's schemas and recorded gold responses, `execute` answers
one call ({name, arguments}) with the simulator, `release` forgets the instance. The simulator
never raises on a bad call: unknown tools, undecodable or missing arguments become error
observations, which the policy sees as the tool's response. The tool's own reward is unused (0).
"""

from __future__ import annotations

import asyncio
from typing import Any

from verl.tools.base_tool import BaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

from slca.sim import build_simulator


class SimulatorTool(BaseTool):
    """The wildcard tool: config {"type": "native", "simulator": <the spec's simulator config>}."""

    def __init__(self, config: dict, tool_schema: OpenAIFunctionToolSchema) -> None:
        super().__init__(config, tool_schema)
        self.simulator = build_simulator(config["simulator"])
        self._rows: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, ToolResponse]:
        """A fresh instance for one row: `create_kwargs` = {"tools": [...], "recorded": [...]}."""
        instance_id, response = await super().create(instance_id)
        row = kwargs.get("create_kwargs") or {}
        self._rows[instance_id] = (list(row.get("tools") or []), list(row.get("recorded") or []))
        return instance_id, response

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs: Any) -> tuple[ToolResponse, float, dict]:
        """The simulator's observation for the call `parameters` = {"name", "arguments"}."""
        tools, recorded = self._rows.get(instance_id, ([], []))
        # The sgls simulator waits on HTTP: answer off the event loop so other rollouts keep going.
        observation = await asyncio.get_running_loop().run_in_executor(
            None, lambda: self.simulator.respond(parameters, tools=tools, recorded=recorded)
        )
        return ToolResponse(text=observation.text), 0.0, {"kind": observation.kind, "truncated": observation.truncated}

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        self._rows.pop(instance_id, None)
