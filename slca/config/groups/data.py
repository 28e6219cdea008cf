"""`data` group: where the SFT, RL and eval splits come from."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from slca.config.base import RuleViolation, SlcaModel
from slca.config.limits import MAX_SEED, MAX_SYNTHETIC_ROWS
from slca.config.options import Options


DATA_OPTIONS = Options("data")


@DATA_OPTIONS.add
class SyntheticData(SlcaModel):
    """Toucan-shaped splits generated offline by `slca data synth`, cached on first use."""

    name: Literal["synthetic"] = Field("synthetic", description="Option name.")
    seed: int = Field(0, ge=0, le=MAX_SEED, description="Generator seed; the same seed gives byte-identical splits.")
    n_sft: int = Field(3000, ge=1, le=MAX_SYNTHETIC_ROWS, description="SFT conversations to generate.")
    n_rl: int = Field(1000, ge=1, le=MAX_SYNTHETIC_ROWS, description="RL prompts (one per assistant tool-call turn) to generate.")
    n_eval: int = Field(200, ge=1, le=MAX_SYNTHETIC_ROWS, description="Held-out eval prompts, carved before the training splits.")
    # More tools than the catalogue holds take all of it (slca/data/synth.py): 1024 loses nothing.
    n_tools: int = Field(8, ge=1, le=1024, description="Tools available per conversation's catalogue sample.")
    tools_per_row: tuple[int, int] = Field((2, 4), description="Inclusive range [lo, hi] of tools offered per row, 1 <= lo <= hi <= n_tools.")
    parallel_fraction: float = Field(0.22, ge=0.0, le=1.0, description="Fraction of tasks that need parallel calls.")
    irrelevant_fraction: float = Field(0.1, ge=0.0, le=1.0, description="Fraction of requests that need no tool call.")
    multistep_fraction: float = Field(0.15, ge=0.0, le=1.0, description="Fraction of tasks with dependent steps (a later call uses an earlier response).")
    followup_fraction: float = Field(0.2, ge=0.0, le=1.0, description="Fraction of conversations with a second user turn.")
    uncited_answer_fraction: float = Field(0.0, ge=0.0, le=1.0, description="Fraction of final answers after tool calls that cite none of the tool results (an imperfect teacher).")
    redundant_call_fraction: float = Field(0.0, ge=0.0, le=1.0, description="Biased teacher: share of SFT-split tasks with tool calls that end with one unneeded call, with that tool's default arguments, to another offered tool (RL and eval splits stay clean).")
    omitted_optional_fraction: float = Field(0.0, ge=0.0, le=1.0, description="Biased teacher: share of requested optional arguments that SFT-split calls leave out (RL and eval splits stay clean).")
    omitted_results_fraction: float = Field(0.0, ge=0.0, le=1.0, description="Biased teacher: share of SFT-split tasks with tool calls whose final answer is one fixed sentence reporting none of the tool results (RL and eval splits stay clean).")
    parallel_style: Literal["list", "blocks"] = Field("list", description="Parallel calls as one <tool_call> block holding a JSON list, or one block per call.")
    cache_dir: str = Field(".cache/slca/data", description="Where generated splits are cached, keyed by their parameters.")

    @model_validator(mode="after")
    def _consistent(self) -> SyntheticData:
        lo, hi = self.tools_per_row
        if not 1 <= lo <= hi:
            raise RuleViolation("tools_per_row", f"[{lo}, {hi}] is not a range with 1 <= lo <= hi")
        if hi > self.n_tools:
            raise RuleViolation("tools_per_row", f"upper bound {hi} exceeds data.n_tools={self.n_tools}")
        # One uniform draw picks the task kind: these shares are slices of [0, 1).
        shares = self.irrelevant_fraction + self.parallel_fraction + self.multistep_fraction
        if shares > 1.0 + 1e-9:
            raise RuleViolation("multistep_fraction", f"irrelevant + parallel + multistep fractions sum to {shares:g} > 1")
        return self


@DATA_OPTIONS.add
class ToucanData(SlcaModel):
    """The published Toucan-derived splits, read from local parquet files."""

    name: Literal["toucan", "toucan_full"] = Field("toucan", description="Option name; `toucan_full` uses the 74,241-row SFT set.")
    sft_path: str = Field(..., description="SFT parquet (ShareGPT + hermes markup).")
    rl_path: str = Field(..., description="RL parquet (verl-native rows).")
    eval_path: str = Field(..., description="Held-out eval parquet (verl-native rows).")
    on_error: Literal["fail", "skip"] = Field("fail", description="Malformed rows: stop, or skip and write a rejects file.")


# The union is built from the registered options when first imported (slca/config/options.py).
__getattr__ = DATA_OPTIONS.module_getattr(__name__, "DataConfig")
