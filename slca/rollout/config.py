"""Rollout settings: the `train.rl` fields the multi-turn loop needs, plus prompt-rendering options."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RolloutConfig:
    """Caps and sampling of the multi-turn loop (docs/method.md#tool-simulators termination rules, docs/method.md#reference-hyperparameters values).

    max_response_length counts every response token, observations included. temperature 0 is greedy.
    inject_tools: pass the row's tools to the chat template (False = the reference's
    disable_tool_schema_injection, when the system prompt already lists the schemas).
    sim_workers: threads answering one round's tool calls across trajectories (LLM simulators).
    max_turn_tokens: tokens one assistant turn may generate at most (None: only the response budget).
    """

    max_prompt_length: int = 24576
    max_response_length: int = 8192
    max_assistant_turns: int = 10
    max_tool_rounds: int = 6
    max_parallel_calls: int = 20
    temperature: float = 1.0
    top_p: float = 1.0
    inject_tools: bool = True
    sim_workers: int = 1
    max_turn_tokens: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_prompt_length", "max_response_length", "max_assistant_turns", "max_parallel_calls",
                     "sim_workers"):
            if getattr(self, name) < 1:
                raise ValueError(f"RolloutConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.max_turn_tokens is not None and self.max_turn_tokens < 1:
            raise ValueError(f"RolloutConfig.max_turn_tokens must be >= 1 or None, got {self.max_turn_tokens}")
        if self.max_tool_rounds < 0:
            raise ValueError(f"RolloutConfig.max_tool_rounds must be >= 0, got {self.max_tool_rounds}")
        if self.temperature < 0 or not 0 < self.top_p <= 1:
            raise ValueError(f"RolloutConfig needs temperature >= 0 and 0 < top_p <= 1, got "
                             f"{self.temperature}, {self.top_p}")

    @classmethod
    def from_rl(cls, rl: Any, **overrides: Any) -> RolloutConfig:
        """Build from a `train.rl` config (RlConfig or any object/mapping with its field names)."""
        names = ("max_prompt_length", "max_response_length", "max_assistant_turns", "max_tool_rounds",
                 "max_parallel_calls", "temperature", "top_p")
        get = rl.get if isinstance(rl, dict) else (lambda k: getattr(rl, k))
        values = {k: get(k) for k in names}
        values.update(overrides)
        return cls(**values)
