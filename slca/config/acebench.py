"""The LLM user simulator of ACEBench's agent_multi_turn category (docs/eval.md#acebenchs-agent-categories).

It is reached like every other endpoint slca calls, through the one HTTP client (slca/http.py:
deadlines, reply-size cap, retries, the API key only from the named environment variable and only
to this endpoint); the policy under evaluation is always the agent.
"""

from __future__ import annotations

from pydantic import Field

from slca.config.base import SlcaModel
from slca.config.http import HttpEndpoint, knob
from slca.config.limits import MAX_CONTEXT_TOKENS, MAX_TEMPERATURE


class AceBenchUser(HttpEndpoint):
    """The user simulator's OpenAI-compatible endpoint and sampling (ACEBench's defaults: temperature 0.001, 1000 tokens)."""

    base_url: str = knob("base_url", "http://127.0.0.1:8004/v1")
    api_key_env: str | None = knob("api_key_env", "SLCA_ACEBENCH_USER_API_KEY")
    model: str = Field("gpt-4o", min_length=1, description="Model name sent to the endpoint (ACEBench's default user model is gpt-4o).")
    temperature: float = Field(0.001, ge=0.0, le=MAX_TEMPERATURE, description="Sampling temperature of the user simulator.")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling mass of the user simulator.")
    max_tokens: int = Field(1000, ge=1, le=MAX_CONTEXT_TOKENS, description="Completion token cap of each user message.")


class AceBenchEval(SlcaModel):
    """ACEBench settings: the user simulator of its agent_multi_turn category."""

    user: AceBenchUser | None = Field(None, description="The agent_multi_turn user simulator's endpoint; null skips that category, saying so on the card.")
