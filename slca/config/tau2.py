"""`eval.tau2`: how the `tau2` benchmark runs τ²-bench (docs/tau2.md).

The policy under evaluation is always the agent (slca serves it); the user simulator and the
natural-language assertion judge are LLMs named here and reached through litellm, so any
OpenAI-compatible server (`openai/<served name>` plus `base_url`) or a hosted provider works.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from slca.config.base import RuleViolation, SlcaModel
from slca.config.limits import MAX_WALL_SECONDS

DOMAINS = ("retail", "telecom")
# Domains τ² knows but this checkout cannot run, and why (one line each, shown at composition).
UNAVAILABLE = {"airline": "its database (db.json) is not in the public τ²-bench repository (docs/tau2.md#airline)",
               "mock": "a toy domain for τ²'s own tests, not a benchmark"}


class Tau2Llm(SlcaModel):
    """One LLM τ² calls through litellm (the user simulator or the judge)."""

    model: str = Field("openai/gpt-4.1", min_length=1, description="litellm model name: openai/<served name> for an OpenAI-compatible server, or a provider's model.")
    base_url: str | None = Field(None, description="OpenAI-compatible base URL (http://host:port/v1); null uses the provider's own endpoint.")
    api_key_env: str | None = Field("OPENAI_API_KEY", description="Environment variable holding the API key; null sends a placeholder (local servers ignore it).")
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="Sampling temperature of this LLM (τ²'s default is 0).")


class Tau2Eval(SlcaModel):
    """τ²-bench settings: which domains, how many trials, τ²'s own limits, the user simulator and the judge."""

    domains: list[str] = Field(default_factory=lambda: list(DOMAINS), min_length=1, description="Domains evaluated (distinct): retail, telecom.")
    trials: int = Field(1, ge=1, le=32, description="Trials per task; pass^k is reported for every k from 1 to this.")
    # 500 times τ²'s defaults: a simulation that long has lost its task anyway.
    max_steps: int = Field(200, ge=1, le=100_000, description="Messages one simulation may exchange at most (τ²'s max_steps); over it the task scores 0.")
    max_errors: int = Field(10, ge=1, le=100_000, description="Tool errors one simulation may hit at most (τ²'s max_errors); over it the task scores 0.")
    max_concurrency: int = Field(1, ge=1, le=64, description="Simulations run at once inside τ²'s process (the served policy answers one request at a time).")
    nl_assertions: bool = Field(False, description="Also score tasks' natural-language assertions with the judge (τ²'s all_with_nl_assertions); off is τ²'s standard scoring.")
    user: Tau2Llm = Field(default_factory=Tau2Llm, description="The user simulator's LLM.")
    judge: Tau2Llm = Field(default_factory=lambda: Tau2Llm(model="openai/gpt-4o-mini"), description="The natural-language assertion judge (read only when nl_assertions is true).")
    env_dir: str = Field(".cache/tau2-env", min_length=1, description="τ²'s Python >= 3.12 environment (scripts/build_tau2_env.sh); a relative path is taken from the repository root.")
    timeout_s: float = Field(86400.0, gt=0, le=MAX_WALL_SECONDS, description="Wall-clock limit in seconds of one τ² run (one domain, one seed, one protocol cell).")

    @field_validator("domains")
    @classmethod
    def _known_domains(cls, value: list[str]) -> list[str]:
        for i, name in enumerate(value):
            if name in UNAVAILABLE:
                raise RuleViolation(str(i), f"domain {name!r} cannot run: {UNAVAILABLE[name]}")
            if name not in DOMAINS:
                raise RuleViolation(str(i), f"unknown domain {name!r}; choose from {', '.join(DOMAINS)}")
        if len(set(value)) != len(value):
            raise RuleViolation("", f"{value} lists a domain twice")
        return value
