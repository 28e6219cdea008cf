"""`eval` group: the evaluation protocol, the fragility factors it controls, its decoding and its
own rollout caps (docs/eval.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from slca.config.acebench import AceBenchEval
from slca.config.base import RuleViolation, SlcaModel, plain_name, system_prompt_choice
from slca.config.benchmarks import benchmark_categories, benchmark_names
from slca.config.http import HttpEndpoint, knob
from slca.config.lm_eval import LmEvalEval
from slca.config.limits import MAX_CONTEXT_TOKENS, MAX_GROUP_SIZE, MAX_ROWS, MAX_TEMPERATURE, MAX_TURNS, Seed
from slca.config.plug_point_names import GENERATOR_NAMES
from slca.config.tau2 import Tau2Eval


class EvalEndpoint(HttpEndpoint):
    """The OpenAI-compatible completions endpoint that serves the policy when `generator: openai`."""

    model: str | None = Field(None, description="Served model name; null sends the evaluated model directory.")
    timeout_s: float = knob("timeout_s", 600.0)


class EvalRollout(SlcaModel):
    """Evaluation's own rollout caps: changing an RL length never changes evaluation."""

    max_prompt_length: int = Field(24576, ge=1, le=MAX_CONTEXT_TOKENS, description="Prompt tokens at most; longer rows are skipped and counted.")
    max_response_length: int = Field(8192, ge=1, le=MAX_CONTEXT_TOKENS, description="Response tokens (policy and observations) per trajectory at most.")
    max_assistant_turns: int = Field(10, ge=1, le=MAX_TURNS, description="Assistant turns per trajectory at most.")
    max_tool_rounds: int = Field(6, ge=0, le=MAX_TURNS, description="Tool rounds per trajectory at most (0: single turn).")
    max_parallel_calls: int = Field(20, ge=1, le=MAX_TURNS, description="Calls executed per tool round at most; the rest are dropped and counted.")


class EvalConfig(SlcaModel):
    """Evaluation over a grid of seeds x template construction x thinking x system prompt, reported as mean +- std.

    Success counts a row whose normalised score reaches `reward.success_threshold` (one threshold for
    training and evaluation alike).
    """

    renamed_fields = {"templates": "constructions", "bfcl_categories": "categories"}

    name: str = Field("default", description="Option name, recorded in the protocol card.")
    benchmark: str = Field("toucan", description="Benchmark from the evaluation registry: toucan (the data stage's eval split, in-domain) or another registered one.")
    generator: str = Field("hf", description="Generator from the rollout registry that samples the evaluated policy: hf, vllm (GPU only) or openai.")
    endpoint: EvalEndpoint = Field(default_factory=EvalEndpoint, description="Endpoint of the `openai` generator (the shared HTTP client knobs).")
    seeds: list[Seed] = Field(default_factory=lambda: [0], min_length=1, description="Sampling seeds (distinct); metrics are mean +- std over them; at temperature 0 only the first is run.")
    constructions: list[Literal["native", "context"]] = Field(
        default_factory=lambda: ["native"], min_length=1, description="Chat-template constructions to evaluate (distinct)."
    )
    thinking: list[Literal["keep", "drop"]] = Field(default_factory=lambda: ["keep"], min_length=1, description="Thinking-history retention settings (distinct).")
    system_prompts: list[str] = Field(
        default_factory=lambda: ["dataset"], min_length=1,
        description="System prompts (distinct): dataset, dataset_template, bfcl_default, bfcl_default_copied, stronger, stronger_notes_1_2, none or a file path.",
    )
    limit: int | None = Field(None, ge=1, le=MAX_ROWS, description="Rows evaluated at most (the first ones); null evaluates all.")
    temperature: float = Field(0.0, ge=0.0, le=MAX_TEMPERATURE, description="Sampling temperature (0 = greedy: seeds collapse to the first).")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling mass in (0, 1].")
    max_tokens: int | None = Field(None, ge=1, le=MAX_CONTEXT_TOKENS, description="Tokens one assistant turn may generate at most; null leaves only rollout.max_response_length.")
    n: int = Field(1, ge=1, le=MAX_GROUP_SIZE, description="Samples per row per seed (> 1 needs temperature > 0); row metrics are averaged over them.")
    rollout: EvalRollout = Field(default_factory=EvalRollout, description="Evaluation's own rollout caps.")
    allow_empty_cells: bool = Field(False, description="Record a protocol cell that evaluated no row (every prompt over the cap, every τ² simulation raised) as empty, with null metrics; false fails the evaluation naming why.")
    model_dir: str | None = Field(None, description="Evaluate this model directory instead of the run's trained policies.")
    from_run: str | None = Field(None, description="Evaluate the trained policies (sft, rl) of this run directory instead of this run's.")
    split: Literal["eval", "rl"] = Field("eval", description="Split of the data stage the toucan benchmark evaluates on (rows with a ground truth: eval or rl).")
    categories: list[str] | None = Field(
        None, min_length=1,
        description="Categories evaluated (distinct; null: every category of the benchmark): bfcl's simple ... live_relevance, bfcl_multi_turn's base, miss_func, miss_param, long_context, acebench's normal_*, special_* and agent_* ones.",
    )
    tau2: Tau2Eval = Field(default_factory=Tau2Eval, description="τ²-bench settings, read when benchmark is tau2 (docs/tau2.md).")
    lm_eval: LmEvalEval = Field(default_factory=LmEvalEval, description="lm-evaluation-harness settings, read when benchmark is lm_eval (docs/eval.md#table-5-general-capabilities).")
    acebench: AceBenchEval = Field(default_factory=AceBenchEval, description="ACEBench settings, read when benchmark is acebench (docs/eval.md#acebenchs-agent-categories).")

    @field_validator("name")
    @classmethod
    def _plain(cls, value: str) -> str:
        return plain_name(value, "eval name")  # type: ignore[return-value]

    @field_validator("benchmark")
    @classmethod
    def _known_benchmark(cls, value: str) -> str:
        if value not in benchmark_names():
            raise RuleViolation("", f"unknown benchmark {value!r}; registered: {', '.join(benchmark_names())}")
        return value

    @field_validator("generator")
    @classmethod
    def _registered(cls, value: str) -> str:
        if value not in GENERATOR_NAMES:
            raise RuleViolation("", f"unknown generator {value!r}; registered: {', '.join(sorted(GENERATOR_NAMES))}")
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

    @field_validator("seeds", "constructions", "thinking", "system_prompts")
    @classmethod
    def _distinct(cls, value: list) -> list:
        # A repeated factor level would be counted twice in mean +- std.
        if len(set(value)) != len(value):
            raise RuleViolation("", f"{value} lists a value twice")
        return value

    @model_validator(mode="after")
    def _samples_need_sampling(self) -> EvalConfig:
        # n greedy samples of one prompt are one sample n times: refused rather than averaged.
        if self.n > 1 and self.temperature == 0:
            raise RuleViolation("n", f"n={self.n} samples at temperature 0 are identical; set eval.temperature > 0 or eval.n=1")
        if self.model_dir is not None and self.from_run is not None:
            raise RuleViolation("from_run", "set eval.model_dir or eval.from_run, not both")
        if self.categories is not None:
            _known_categories(self.benchmark, self.categories)
        if self.benchmark == "lm_eval":
            _harness_protocol(self)
        return self


def _harness_protocol(cfg: EvalConfig) -> None:
    """lm-evaluation-harness builds its tasks' prompts and loads the model itself: slca's prompt factors do not
    apply (one level each, recorded as such), and only the hf and vllm generators have a harness model."""
    for name in ("constructions", "thinking", "system_prompts"):
        if len(getattr(cfg, name)) > 1:
            raise RuleViolation(name, f"eval.benchmark=lm_eval scores the harness's own prompts; give one level, not {getattr(cfg, name)}")
    if cfg.generator not in ("hf", "vllm"):
        raise RuleViolation("generator", f"eval.benchmark=lm_eval runs the model through the harness's hf or vllm model, not {cfg.generator!r}")


def _known_categories(benchmark: str, chosen: list[str]) -> None:
    """`chosen` are distinct categories of `benchmark` (one that has categories at all)."""
    known = benchmark_categories(benchmark)
    if known is None:
        raise RuleViolation("categories", f"eval.benchmark={benchmark} has no categories; leave it null")
    for i, name in enumerate(chosen):
        if name not in known:
            raise RuleViolation(f"categories.{i}", f"unknown {benchmark} category {name!r}; known: {', '.join(known)}")
    if len(set(chosen)) != len(chosen):
        raise RuleViolation("categories", f"{chosen} lists a category twice")
