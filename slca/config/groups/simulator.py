"""`simulator` group: what answers the policy's tool calls during rollouts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from slca.config.base import SlcaModel
from slca.config.http import HttpEndpoint, knob
from slca.config.limits import MAX_CONTEXT_TOKENS, MAX_SEED, MAX_TEMPERATURE, MAX_TEXT_CHARS
from slca.config.options import Options


SIMULATOR_OPTIONS = Options("simulator")


@SIMULATOR_OPTIONS.add
class SchemaSimulator(SlcaModel):
    """Deterministic, schema-guided responses: errors for bad calls, recorded or synthesised results otherwise."""

    name: Literal["schema"] = Field("schema", description="Option name.")
    seed: int = Field(0, ge=0, le=MAX_SEED, description="Seed mixed into each call's hash for synthesised responses.")
    max_response_chars: int = Field(2048, ge=16, le=MAX_TEXT_CHARS, description="Observation length cap in characters (middle truncation).")


@SIMULATOR_OPTIONS.add
class SglsSimulator(HttpEndpoint):
    """An LLM behind an OpenAI-compatible endpoint fabricates the API response (docs/method.md#tool-simulators);
    its endpoint knobs are the shared HTTP client's (slca/config/http.py)."""

    name: Literal["sgls"] = Field("sgls", description="Option name.")
    base_url: str = knob("base_url", "http://127.0.0.1:8003/v1")
    model: str = Field("qwen3-235b-a22b", description="Model name sent to the endpoint.")
    api_key_env: str | None = knob("api_key_env", "SLCA_SIM_API_KEY")
    max_retries: int = knob("max_retries", 2)
    max_concurrency: int = knob("max_concurrency", 20)
    cache_dir: str | None = knob("cache_dir", ".cache/slca/sgls")
    temperature: float = Field(0.6, ge=0.0, le=MAX_TEMPERATURE, description="Sampling temperature of the simulator.")
    max_tokens: int = Field(4096, ge=1, le=MAX_CONTEXT_TOKENS, description="Completion token cap.")
    max_response_chars: int = Field(2048, ge=16, le=MAX_TEXT_CHARS, description="Observation length cap in characters (middle truncation).")


@SIMULATOR_OPTIONS.add
class ReplaySimulator(SlcaModel):
    """Answers only with responses recorded in the data; anything else is an error observation."""

    name: Literal["replay"] = Field("replay", description="Option name.")
    max_response_chars: int = Field(2048, ge=16, le=MAX_TEXT_CHARS, description="Observation length cap in characters (middle truncation).")


# The union is built from the registered options when first imported (slca/config/options.py).
__getattr__ = SIMULATOR_OPTIONS.module_getattr(__name__, "SimulatorConfig")
