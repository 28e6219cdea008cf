"""`simulator` group: what answers the policy's tool calls during rollouts."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field

from slca.config.base import SlcaModel


class SchemaSimulator(SlcaModel):
    """Deterministic, schema-guided responses: errors for bad calls, recorded or synthesised results otherwise."""

    name: Literal["schema"] = Field("schema", description="Option name.")
    seed: int = Field(0, ge=0, description="Seed mixed into each call's hash for synthesised responses.")
    max_response_chars: int = Field(2048, ge=16, description="Observation length cap in characters (middle truncation).")


class SglsSimulator(SlcaModel):
    """An LLM behind an OpenAI-compatible endpoint fabricates the API response (docs/method.md#tool-simulators)."""

    name: Literal["sgls"] = Field("sgls", description="Option name.")
    base_url: str = Field("http://127.0.0.1:8003/v1", description="OpenAI-compatible endpoint.")
    model: str = Field("qwen3-235b-a22b", description="Model name sent to the endpoint.")
    api_key_env: str = Field("SLCA_SIM_API_KEY", description="Environment variable holding the API key.")
    temperature: float = Field(0.6, ge=0.0, description="Sampling temperature of the simulator.")
    max_tokens: int = Field(4096, ge=1, description="Completion token cap.")
    timeout_s: float = Field(540.0, gt=0, description="Per-request timeout in seconds.")
    max_retries: int = Field(2, ge=0, description="Extra attempts on timeouts and transport errors.")
    retry_backoff_s: float = Field(1.0, ge=0.0, description="Sleep before retry k: retry_backoff_s * k seconds.")
    max_concurrency: int = Field(20, ge=1, description="Most requests in flight for one turn's calls.")
    cache_dir: str | None = Field(".cache/slca/sgls", description="On-disk cache keyed by the prompt hash; null disables it.")
    max_response_chars: int = Field(2048, ge=16, description="Observation length cap in characters (middle truncation).")


class ReplaySimulator(SlcaModel):
    """Answers only with responses recorded in the data; anything else is an error observation."""

    name: Literal["replay"] = Field("replay", description="Option name.")
    max_response_chars: int = Field(2048, ge=16, description="Observation length cap in characters (middle truncation).")


SimulatorConfig = Annotated[Union[SchemaSimulator, SglsSimulator, ReplaySimulator], Field(discriminator="name")]
