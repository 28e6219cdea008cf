"""`reward` group: how a rollout is scored (HierR process + summary judge, or binary exact match)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from slca.config.base import RuleViolation, SlcaModel
from slca.config.http import HttpEndpoint, knob
from slca.config.limits import MAX_CONTEXT_TOKENS, MAX_JSON_DEPTH, MAX_TEMPERATURE, MAX_TEXT_CHARS, MAX_WEIGHT
from slca.config.options import Options


class JudgeConfig(HttpEndpoint):
    """Summary (response-quality) judge: `grounding` is offline and deterministic, `llm` calls an endpoint
    (its endpoint knobs are the shared HTTP client's, slca/config/http.py)."""

    name: Literal["grounding", "llm", "none"] = Field("grounding", description="Judge from the summary-judge registry; `none` scores the failure score.")
    base_url: str = knob("base_url", "http://127.0.0.1:8016/v1")
    model: str = Field("gpt-oss-120b", description="Model name sent to the `llm` judge.")
    api_key_env: str | None = knob("api_key_env", "SLCA_JUDGE_API_KEY")
    retry_backoff_s: float = knob("retry_backoff_s", 2.0)
    cache_dir: str | None = knob("cache_dir", ".cache/slca/judge")
    temperature: float = Field(0.0, ge=0.0, le=MAX_TEMPERATURE, description="Judge sampling temperature.")
    max_tokens: int = Field(8192, ge=1, le=MAX_CONTEXT_TOKENS, description="Judge completion token cap.")
    failure_score: float = Field(0.0, ge=0.0, le=1.0, description="Summary score in [0, 1] when the judge fails or its answer cannot be parsed.")
    min_response_chars: int = Field(10, ge=0, le=MAX_TEXT_CHARS, description="Final answers shorter than this score 0 without a judge call.")
    require_tool_response: bool = Field(True, description="Reference short-circuit: no tool response means summary 0 (docs/method.md#summary-judge).")
    prompt_style: Literal["reference", "interactions"] = Field("reference", description="`llm` prompt: tool results only (docs/method.md#summary-judge) or all calls then all responses (v8.2, docs/method.md#interactions-judge-prompt).")
    strip_role_word: bool = Field(False, description="[FIX] drop the leading decoded 'assistant' role word from the judged answer (docs/method.md#reference-quirks Q18).")
    grounding_max_values: int = Field(8, ge=1, le=1024, description="`grounding`: salient values an answer must cite from a source for full coverage.")


REWARD_OPTIONS = Options("reward")


@REWARD_OPTIONS.add
class HierRReward(SlcaModel):
    """Hierarchical tool-call reward: five process components against gold calls plus a summary judge."""

    name: Literal["hierr"] = Field("hierr", description="Option name.")
    w_format: float = Field(0.10, ge=0.0, le=MAX_WEIGHT, description="Weight of the format component, >= 0.")
    w_name: float = Field(0.25, ge=0.0, le=MAX_WEIGHT, description="Weight of the tool-name multiset F1, >= 0.")
    w_key: float = Field(0.15, ge=0.0, le=MAX_WEIGHT, description="Weight of the argument-key Jaccard, >= 0.")
    w_value: float = Field(0.20, ge=0.0, le=MAX_WEIGHT, description="Weight of the argument-value loose match, >= 0.")
    w_parallel: float = Field(0.30, ge=0.0, le=MAX_WEIGHT, description="Weight of the first-step parallel-count match, >= 0.")
    w_process: float = Field(1.0, ge=0.0, le=MAX_WEIGHT, description="Weight of process_score in the total score, >= 0 (w_process + w_summary > 0).")
    w_summary: float = Field(1.0, ge=0.0, le=MAX_WEIGHT, description="Weight of summary_score in the total score, >= 0 (w_process + w_summary > 0).")
    no_call_penalty: float = Field(-0.5, ge=-MAX_WEIGHT, le=0.0, description="Score (<= 0) when gold needs a call but the response makes none.")
    success_thresholds: tuple[float, ...] = Field((0.7, 0.8, 0.9, 1.0), description="Thresholds t in [0, 1] reported as success@t on the normalised score.")
    success_threshold: float = Field(0.9, ge=0.0, le=1.0, description="Threshold in [0, 1] of the `success` key, used by training and evaluation alike (docs/method.md#in-domain-metrics: Success = success@0.9).")
    parser: Literal["hermes", "pythonic"] = Field("hermes", description="Tool-call parser applied to the response.")
    max_response_chars: int = Field(200_000, ge=1, le=MAX_TEXT_CHARS, description="Responses longer than this are a format error (too_large), not parsed.")
    max_json_depth: int = Field(32, ge=1, le=MAX_JSON_DEPTH, description="Tool-call JSON nested deeper than this is a format error (too_deep).")
    format_one_without_needed_call: bool = Field(False, description="[FIX] format = 1 when gold needs no call and none is made (reference: 0; docs/method.md#reference-quirks Q6).")
    count_tags_outside_responses: bool = Field(False, description="[FIX] ignore <tool_call> tags inside <tool_response> blocks (reference counts them; docs/method.md#reference-quirks Q18).")
    judge: JudgeConfig = Field(default_factory=JudgeConfig, description="Summary judge settings.")

    @field_validator("success_thresholds")
    @classmethod
    def _thresholds_in_unit_interval(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        bad = [t for t in value if not 0.0 <= t <= 1.0]
        if bad:
            raise RuleViolation("", f"{bad[0]} is outside [0, 1] (thresholds apply to the normalised score)")
        if len(set(value)) != len(value):
            raise RuleViolation("", f"{list(value)} lists a threshold twice")
        return value

    @model_validator(mode="after")
    def _total_weight_positive(self) -> HierRReward:
        # weighted_score_norm divides by w_process + w_summary (docs/method.md#composition-and-success).
        if self.w_process + self.w_summary <= 0:
            raise RuleViolation("w_process", "w_process + w_summary must be > 0: the normalised score divides by it")
        return self


@REWARD_OPTIONS.add
class ExactMatchReward(SlcaModel):
    """Binary reward: format correct and predicted calls equal the gold calls (efficiency paper, eq. 8)."""

    name: Literal["exact_match"] = Field("exact_match", description="Option name.")
    require_think: bool = Field(False, description="Format also needs a <think>...</think> block.")
    require_tool_tags: bool = Field(True, description="Format needs balanced <tool_call> tags around every call.")
    parser: Literal["hermes", "pythonic"] = Field("hermes", description="Tool-call parser applied to the response.")
    max_response_chars: int = Field(200_000, ge=1, le=MAX_TEXT_CHARS, description="Responses longer than this are a format error (too_large), not parsed.")
    max_json_depth: int = Field(32, ge=1, le=MAX_JSON_DEPTH, description="Tool-call JSON nested deeper than this is a format error (too_deep).")


# The union is built from the registered options when first imported (slca/config/options.py).
__getattr__ = REWARD_OPTIONS.module_getattr(__name__, "RewardConfig")
