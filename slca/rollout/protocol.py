"""Prompt protocols for rollouts: which system prompt, how history is constructed, what thinking is kept."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable

from slca.rollout.config import RolloutConfig
from slca.rollout.loop import default_prompt
from slca.toolcall.templates import prompt_messages

PromptFn = Callable[[Mapping[str, Any], RolloutConfig], tuple[list[dict[str, Any]], list[dict[str, Any]] | None]]


def protocol_prompt_fn(*, system_prompt: str, construction: str = "native", thinking: str = "keep") -> PromptFn:
    """A `run_rollouts` prompt_fn rendering each row under one protocol; tools go to the chat
    template unless the chosen system prompt already shows them."""

    def prompt_fn(row: Mapping[str, Any], cfg: RolloutConfig) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
        messages, tools = default_prompt(row, cfg)
        return prompt_messages(messages, tools, construction=construction, thinking=thinking, system_prompt=system_prompt)

    return prompt_fn
