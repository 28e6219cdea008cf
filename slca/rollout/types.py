"""Value types of the rollout: generator outputs, trajectories with their token spans, batch stats."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

FinishReason = Literal["stop", "length"]

# Per-token kinds of a response (Trajectory.token_kinds; collate pads with -1): policy text outside
# markup, thinking (<think>…</think>, tags included), tool call (<tool_call>…</tool_call>), environment.
KIND_TEXT, KIND_THINKING, KIND_TOOL_CALL, KIND_ENV = 0, 1, 2, 3
SpanKind = Literal["tool", "final", "env"]

# Why a rollout ended. "final": the last turn closed without a tool call (a natural answer);
# "unparsed_call": it wrote a </tool_call> but no call parsed (docs/method.md#tool-simulators: stop if none parsed);
# the rest are caps (docs/method.md#tool-simulators "Termination rules").
ROLLOUT_FINISH_REASONS: tuple[str, ...] = (
    "final",
    "unparsed_call",
    "max_response_length",
    "max_turn_tokens",
    "max_assistant_turns",
    "max_tool_rounds",
    "observation_overflow",
)


@dataclass(frozen=True)
class GenerationOutput:
    """One sampled continuation: its token ids (the stop token kept, as vLLM does) and why it ended.

    `logprobs` (when the generator provides them) holds one log-probability per token id.
    """

    token_ids: list[int]
    finish_reason: FinishReason
    logprobs: list[float] | None = None


@dataclass(frozen=True)
class Span:
    """A half-open token range [start, end) of the response: one assistant turn or one environment insert."""

    kind: SpanKind
    start: int
    end: int


@dataclass
class Trajectory:
    """One multi-turn rollout of one row.

    row_index: position of the row in the input list; group_index: position of its group among the
    rows that were rolled out (equal to row_index unless prompts were skipped); sample_index: 0..n-1.
    prompt_ids: None when the loop did not tokenise the prompt (run_rollouts' keep_prompt_ids=False).
    response_mask: 1 for policy-sampled tokens, 0 for environment tokens (docs/method.md#segments-from-mask-topology).
    token_kinds: one KIND_* per response token (for per-segment entropy and the like).
    response_text keeps every special token; solution_text drops only the ChatML control tokens
    and keeps the tool/think markup the reward parses.
    """

    row_index: int
    group_index: int
    sample_index: int
    prompt_ids: list[int] | None
    response_ids: list[int] = field(default_factory=list)
    response_mask: list[int] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    token_kinds: list[int] = field(default_factory=list)
    response_text: str = ""
    solution_text: str = ""
    n_assistant_turns: int = 0
    n_tool_rounds: int = 0
    n_tool_calls: int = 0
    n_dropped_calls: int = 0
    n_truncated_observations: int = 0
    finish_reason: str = ""
    last_turn_is_tool_call: bool = False
    tool_calls: list[list[Any]] = field(default_factory=list)  # executed calls per tool round
    observation_kinds: Counter = field(default_factory=Counter)

    @property
    def response_length(self) -> int:
        return len(self.response_ids)

    @property
    def n_policy_tokens(self) -> int:
        return sum(self.response_mask)


@dataclass
class RolloutStats:
    """Batch summary: every way a rollout or a row was cut short is counted here, never silent.

    bad_rows: (row index, field, reason) for rows that could not be rendered; rows_in equals
    rolled-out rows + overlong prompts + bad rows.
    """

    rows_in: int = 0
    rows_rolled_out: int = 0
    n_rollouts: int = 0
    overlong_rows: list[int] = field(default_factory=list)
    longest_prompt: int = 0  # tokens of the longest prompt tokenised, rolled out or not (what the cap is compared with)
    bad_rows: list[tuple[int, str, str]] = field(default_factory=list)
    finish_reasons: Counter = field(default_factory=Counter)
    dropped_calls: int = 0
    tool_calls: int = 0
    truncated_observations: int = 0
    unparsed_call_turns: int = 0
    last_turn_tool_call: int = 0  # rollouts whose last (summary) turn is a tool call (docs/method.md#segments-from-mask-topology [FIX])
    observation_kinds: Counter = field(default_factory=Counter)
    tool_rounds: list[int] = field(default_factory=list)  # per rollout
    assistant_turns: list[int] = field(default_factory=list)  # per rollout
    response_lengths: list[int] = field(default_factory=list)  # per rollout
    generator_calls: int = 0
    generated_tokens: int = 0
    env_tokens: int = 0

    @property
    def overlong_prompts(self) -> int:
        return len(self.overlong_rows)

    def as_metrics(self, prefix: str = "rollout/") -> dict[str, float]:
        """Flat scalar metrics for logging (means over rollouts; counts as totals)."""

        def mean(xs: list[int]) -> float:
            return float(sum(xs)) / len(xs) if xs else 0.0

        out: dict[str, float] = {
            "rows_in": self.rows_in,
            "rollouts": self.n_rollouts,
            "overlong_prompts": self.overlong_prompts,
            "bad_rows": len(self.bad_rows),
            "dropped_calls": self.dropped_calls,
            "tool_calls": self.tool_calls,
            "truncated_observations": self.truncated_observations,
            "unparsed_call_turns": self.unparsed_call_turns,
            "last_turn_tool_call_frac": self.last_turn_tool_call / self.n_rollouts if self.n_rollouts else 0.0,
            "tool_rounds_mean": mean(self.tool_rounds),
            "tool_rounds_max": max(self.tool_rounds, default=0),
            "assistant_turns_mean": mean(self.assistant_turns),
            "response_length_mean": mean(self.response_lengths),
            "response_length_max": max(self.response_lengths, default=0),
            "generator_calls": self.generator_calls,
            "generated_tokens": self.generated_tokens,
            "env_tokens": self.env_tokens,
        }
        for reason in ROLLOUT_FINISH_REASONS:
            out[f"finish/{reason}"] = self.finish_reasons.get(reason, 0)
        for kind, count in sorted(self.observation_kinds.items()):
            out[f"observations/{kind}"] = count
        return {prefix + k: float(v) for k, v in out.items()}


def summarize(trajectories: list[Trajectory], base: RolloutStats | None = None) -> RolloutStats:
    """Add the per-trajectory counts of `trajectories` to `base` (a fresh RolloutStats by default)."""
    stats = base if base is not None else RolloutStats()
    for t in trajectories:
        stats.n_rollouts += 1
        stats.finish_reasons[t.finish_reason] += 1
        stats.dropped_calls += t.n_dropped_calls
        stats.tool_calls += t.n_tool_calls
        stats.truncated_observations += t.n_truncated_observations
        stats.unparsed_call_turns += t.finish_reason == "unparsed_call"
        stats.last_turn_tool_call += t.last_turn_is_tool_call
        stats.observation_kinds.update(t.observation_kinds)
        stats.tool_rounds.append(t.n_tool_rounds)
        stats.assistant_turns.append(t.n_assistant_turns)
        stats.response_lengths.append(t.response_length)
        stats.generated_tokens += t.n_policy_tokens
        stats.env_tokens += t.response_length - t.n_policy_tokens
    return stats
