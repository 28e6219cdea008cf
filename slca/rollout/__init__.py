"""Multi-turn rollouts shared by the local trainer and evaluation: generators, the loop, collation.

    gen = get_generator("hf")(model, pad_token_id=tok.pad_token_id)
    batch = run_rollouts(rows, n=8, generator=gen, simulator=sim, tokenizer=tok,
                         cfg=RolloutConfig.from_rl(spec.train.rl), seed=0)
    batch.stats.as_metrics(); tensors = collate(batch, pad_id=tok.pad_token_id)

Imports only the core packages; torch/transformers are imported where used.
"""

from __future__ import annotations

from slca.rollout.chat import ChatFormat, control_token_ids
from slca.rollout.collate import collate, response_logprobs
from slca.rollout.config import RolloutConfig
from slca.rollout.generators import (
    GENERATORS,
    EndpointError,
    Generator,
    HFGenerator,
    OpenAICompletionsGenerator,
    VLLMGenerator,
    get_generator,
    register_generator,
)
from slca.rollout.loop import BadRow, RolloutBatch, default_prompt, run_rollouts
from slca.rollout.types import (
    KIND_ENV,
    KIND_TEXT,
    KIND_THINKING,
    KIND_TOOL_CALL,
    ROLLOUT_FINISH_REASONS,
    GenerationOutput,
    RolloutStats,
    Span,
    Trajectory,
    summarize,
)

__all__ = [
    "KIND_ENV", "KIND_TEXT", "KIND_THINKING", "KIND_TOOL_CALL", "GENERATORS", "ROLLOUT_FINISH_REASONS", "BadRow", "ChatFormat", "EndpointError", "GenerationOutput",
    "Generator", "HFGenerator", "OpenAICompletionsGenerator", "RolloutBatch", "RolloutConfig", "RolloutStats",
    "Span", "Trajectory", "VLLMGenerator", "collate", "control_token_ids", "default_prompt", "get_generator",
    "register_generator", "response_logprobs", "run_rollouts", "summarize",
]
