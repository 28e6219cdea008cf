"""slca's multi-turn tool loop on verl 0.9.1: the smallest `ToolAgentLoop` subclass that makes a verl
rollout the rollout slca's own loop makes (docs/method.md#segments-from-mask-topology
"Where the mask comes from", docs/method.md#tool-simulators).

verl's loop keeps its state machine, its sampling and its termination checks; four steps differ:
- the prompt is the spec's prompt protocol (`train.rl.system_prompt`) rendered by slca's chat
  format, with the row's own tools, never the wildcard tool's placeholder schema;
- each turn may generate only what is left of the response budget, and records whether it opened
  a tool call (the summary segment's last-turn flag the estimator reads);
- every parsed call goes to the one wildcard tool (the simulator), which answers it against the
  calling row's schemas, however the call names its tool (the reference's routing);
- the observations are appended as slca's environment insert (turn close, tool messages, next
  generation prompt, derived from the chat template), with mask 0, so they are out of the loss.
A turn ends only when the policy ends it (`<|im_end|>`), so every call of the turn runs, whether it
writes one block holding a list or one block per call (as Qwen does); its calls are read by slca's
hermes parser (`slca_hermes`: a JSON object or list per block, `arguments` or `parameters`), never
evaluated.
"""

from __future__ import annotations

import asyncio
import json
from functools import lru_cache
from typing import Any

from verl.experimental.agent_loop.agent_loop import register
from verl.experimental.agent_loop.tool_agent_loop import AgentData, AgentState, ToolAgentLoop
from verl.experimental.agent_loop.tool_parser import FunctionCall, ToolParser
from verl.utils.profiler import simple_timer

from slca.backends.verl.compose import AGENT_LOOP, TOOL_PARSER
from slca.backends.verl.run_spec import run_spec
from slca.rewards.record import WIRE
from slca.rollout.chat import ChatFormat
from slca.rollout.config import RolloutConfig
from slca.rollout.loop import row_env
from slca.rollout.protocol import protocol_prompt_fn
from slca.toolcall import ToolCall, parse_hermes

# The rollout's own per-rollout fields in verl's `extra_fields` (the trainer reads the first).
LAST_TURN_FIELD = WIRE["last_turn_is_tool_call"]
TOOL_CALLS_FIELD = "slca_tool_calls"
DROPPED_CALLS_FIELD = "slca_dropped_calls"


@lru_cache(maxsize=4)
def chat_format(tokenizer: Any) -> ChatFormat:
    """slca's chat-format facts for `tokenizer` (stop ids, tool-round inserts), built once per worker."""
    return ChatFormat(tokenizer)


def _function_call(call: ToolCall) -> FunctionCall:
    try:
        arguments = json.dumps(call.arguments, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):  # e.g. an int past Python's digit limit
        arguments = "<arguments that cannot be written as JSON>"  # the simulator answers "invalid arguments"
    return FunctionCall(name=call.name, arguments=arguments)


@ToolParser.register(TOOL_PARSER)
class SlcaHermesParser(ToolParser):
    """slca's hermes parser as a verl tool parser: every call of a turn the policy ended."""

    def __init__(self, tokenizer: Any) -> None:
        super().__init__(tokenizer)
        self.chat = chat_format(tokenizer)

    @property
    def stop_token_ids(self) -> list[int]:
        # `<|im_end|>` ends every turn; a tool-calling turn may hold several call blocks.
        return sorted(self.chat.stop_token_ids)

    async def extract_tool_calls(self, responses_ids: list[int], tools: Any = None) -> tuple[str, list[FunctionCall]]:
        text = self.tokenizer.decode(responses_ids, skip_special_tokens=False)
        # As slca's loop: only a turn the policy ended runs tools (one cut by the budget does not).
        if not responses_ids or responses_ids[-1] not in self.chat.stop_token_ids:
            return text, []
        return text, [_function_call(call) for call in parse_hermes(text).calls]


@register(AGENT_LOOP)
class SlcaToolAgentLoop(ToolAgentLoop):
    """verl's tool agent loop with slca's prompt, budget, routing and environment insert (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if len(self.tools) != 1:
            raise ValueError(f"the {AGENT_LOOP} agent loop routes every call to one wildcard tool; the tool config has {sorted(self.tools)}")
        (self.wildcard,) = self.tools.values()
        rl = run_spec(str(self.config.slca.spec_path)).train.rl
        self.chat = chat_format(self.tokenizer)
        self.slca_rollout = RolloutConfig.from_rl(rl)
        self.prompt_fn = protocol_prompt_fn(system_prompt=rl.system_prompt)
        self.row: dict[str, Any] = {}
        self.row_context: dict[str, Any] = {}

    async def run(self, sampling_params: dict[str, Any], priority: int = 0, **kwargs: Any) -> Any:
        # The dataset row (verl hands every column over); its chat list is verl's `raw_prompt`.
        self.row = {**kwargs, "prompt": list(kwargs["raw_prompt"])}
        env = row_env(self.row)
        self.row_context = {"tools": env.tools, "recorded": env.recorded}
        return await super().run(sampling_params, priority=priority, **kwargs)

    async def _handle_pending_state(self, agent_data: AgentData, sampling_params: dict[str, Any]) -> AgentState:
        messages, tools = self.prompt_fn(self.row, self.slca_rollout)
        text = self.chat.render_prompt(messages, tools)
        prompt_ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        agent_data.prompt_ids = self._cap_text_prompt_length(list(prompt_ids))
        return AgentState.GENERATING

    async def _handle_generating_state(self, agent_data: AgentData, sampling_params: dict[str, Any], ignore_termination: bool = False) -> AgentState:
        # Every turn shares the response budget (observations included), as in slca's loop.
        budget = self.response_length - len(agent_data.response_mask)
        state = await super()._handle_generating_state(agent_data, {**sampling_params, "max_tokens": budget}, ignore_termination)
        turn = self.tokenizer.decode(agent_data.response_ids, skip_special_tokens=False)
        # Set after the first turn: verl copies the server's fields only into empty extra_fields.
        agent_data.extra_fields[LAST_TURN_FIELD] = int(parse_hermes(turn).n_open > 0)
        for field in (TOOL_CALLS_FIELD, DROPPED_CALLS_FIELD):
            agent_data.extra_fields.setdefault(field, 0)
        return state

    async def _handle_processing_tools_state(self, agent_data: AgentData) -> AgentState:
        calls = agent_data.tool_calls[: self.max_parallel_calls]
        agent_data.extra_fields[TOOL_CALLS_FIELD] += len(calls)
        agent_data.extra_fields[DROPPED_CALLS_FIELD] += len(agent_data.tool_calls) - len(calls)
        with simple_timer("tool_calls", agent_data.metrics):
            responses = await asyncio.gather(*(self._call_tool(call, agent_data.tools_kwargs, agent_data) for call in calls))
        texts = [response.text or "" for response, _, _ in responses]
        insert = self.tokenizer(self.chat.env_text(texts), add_special_tokens=False)["input_ids"]
        # An insert that would reach the response cap ends the rollout (reference termination rule).
        if len(agent_data.response_mask) + len(insert) >= self.response_length:
            return AgentState.TERMINATED
        agent_data.prompt_ids = agent_data.prompt_ids + insert
        agent_data.response_mask = agent_data.response_mask + [0] * len(insert)
        if agent_data.response_logprobs:
            agent_data.response_logprobs = agent_data.response_logprobs + [0.0] * len(insert)
        agent_data.messages.extend({"role": "tool", "content": text} for text in texts)
        agent_data.user_turns += 1
        return AgentState.GENERATING

    async def _call_tool(self, tool_call: FunctionCall, tools_kwargs: dict[str, Any], agent_data: AgentData) -> tuple[Any, float, dict]:
        """Every call, whatever tool it names, goes to the wildcard tool bound to this row."""
        instance_id, _ = await self.wildcard.create(create_kwargs=self.row_context)
        try:
            return await self.wildcard.execute(instance_id, {"name": tool_call.name, "arguments": tool_call.arguments}, agent_data=agent_data)
        finally:
            await self.wildcard.release(instance_id)
