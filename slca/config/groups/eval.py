"""`eval` group: the evaluation protocol and the fragility factors it controls."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, NonNegativeInt, field_validator

from slca.config.base import RuleViolation, SlcaModel, plain_name, system_prompt_choice


class EvalEndpoint(SlcaModel):
    """The OpenAI-compatible completions endpoint that serves the policy when `generator: openai`."""

    base_url: str = Field("http://127.0.0.1:8000/v1", description="Endpoint base URL (the `/completions` route is appended).")
    model: str | None = Field(None, description="Served model name; null sends the evaluated model directory.")
    api_key_env: str | None = Field(None, description="Environment variable holding the API key; null sends none.")
    timeout_s: float = Field(600.0, gt=0, description="Per-request timeout in seconds.")
    max_retries: int = Field(2, ge=0, description="Extra attempts on timeouts, transport errors and retryable HTTP codes.")
    max_concurrency: int = Field(16, ge=1, description="Requests in flight at most.")


class EvalConfig(SlcaModel):
    """Evaluation over a grid of seeds x template x thinking x system prompt, reported as mean +- std.

    Success counts a row whose normalised score reaches `reward.success_threshold` (one threshold for
    training and evaluation alike).
    """

    name: str = Field("default", description="Option name, recorded in the evaluation report.")
    generator: str = Field("hf", description="Generator from the rollout registry that samples the evaluated policy: hf, vllm or openai.")
    endpoint: EvalEndpoint = Field(default_factory=EvalEndpoint, description="Endpoint settings of the `openai` generator.")
    seeds: list[NonNegativeInt] = Field(default_factory=lambda: [0], min_length=1, description="Sampling seeds (distinct); metrics are mean +- std over them.")
    templates: list[Literal["native", "context"]] = Field(
        default_factory=lambda: ["native"], min_length=1, description="Chat-template constructions to evaluate (distinct)."
    )
    thinking: list[Literal["keep", "drop"]] = Field(default_factory=lambda: ["keep"], min_length=1, description="Thinking-history retention settings (distinct).")
    system_prompts: list[str] = Field(
        default_factory=lambda: ["dataset"], min_length=1,
        description="System prompts (distinct): dataset, dataset_template, bfcl_default, stronger, none or a file path.",
    )
    temperature: float = Field(0.0, ge=0.0, description="Sampling temperature (0 = greedy).")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling mass in (0, 1].")
    max_samples: int | None = Field(None, ge=1, description="Rows evaluated at most; null evaluates all.")
    model_dir: str | None = Field(None, description="Evaluate this checkpoint instead of the run's trained policies.")
    split: Literal["eval", "rl"] = Field("eval", description="Split of the data stage to evaluate on (rows with a ground truth: eval or rl).")

    @field_validator("name")
    @classmethod
    def _plain(cls, value: str) -> str:
        return plain_name(value, "eval name")  # type: ignore[return-value]

    @field_validator("generator")
    @classmethod
    def _registered(cls, value: str) -> str:
        from slca.rollout.generators import GENERATORS

        if value not in GENERATORS:
            raise RuleViolation("", f"unknown generator {value!r}; registered: {', '.join(GENERATORS.names())}")
        return value

    @field_validator("system_prompts")
    @classmethod
    def _known_prompts(cls, value: list[str]) -> list[str]:
        for i, item in enumerate(value):
            try:
                system_prompt_choice(item)
            except RuleViolation as exc:
                raise RuleViolation(str(i), exc.message) from None
        return value

    @field_validator("seeds", "templates", "thinking", "system_prompts")
    @classmethod
    def _distinct(cls, value: list) -> list:
        # A repeated factor level would be counted twice in mean +- std.
        if len(set(value)) != len(value):
            raise RuleViolation("", f"{value} lists a value twice")
        return value
