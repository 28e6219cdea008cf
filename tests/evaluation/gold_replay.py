"""BFCL multi-turn gold replays through slca's loop, recording each step's prompt: the messages and tools the
protocol cell handed the chat template, and the token ids the generator received for them.

Used by tests/evaluation/test_bfcl_incremental_prompts.py (the ids equal a full re-render) and by
benchmarks/multi_turn_steps.py (ms per step).
"""

from __future__ import annotations

import copy
import math
from typing import Any

from slca.evaluation.bfcl.multi_turn.loop import Conversation, bfcl_constants, run_conversations
from slca.rollout.config import RolloutConfig
from slca.rollout.types import GenerationOutput

ROLLOUT = RolloutConfig(max_prompt_length=200_000, max_response_length=512, temperature=0)


def script(entry: Any, repeat: int = 1) -> list[str]:
    """The outputs of a gold replay that makes one call per step (grouped when a turn has more calls than
    BFCL's step limit allows), each after a short thinking block, and closes every turn with prose.
    repeat: each call is made that many times in a row (longer conversations; a repeat may fail, as a model's would)."""
    limit = bfcl_constants()[0]
    out = []
    for turn, gold in enumerate(entry.ground_truth):
        calls = [c for c in gold for _ in range(repeat)]
        size = max(1, math.ceil(len(calls) / limit))
        for k in range(0, len(calls), size):
            out.append(f"<think>\nturn {turn} step {k}: call it\n</think>\n\n["
                       + ", ".join(c.source() for c in calls[k : k + size]) + "]")
        out.append(f"<think>\nturn {turn} done\n</think>\n\nDone with turn {turn}.")
    return out


class Recorder:
    """A prompt_fn that keeps a copy of what it returned last: the (messages, tools) the loop renders."""

    def __init__(self, prompt_fn: Any) -> None:
        self.prompt_fn = prompt_fn
        self.last: Any = None

    def __call__(self, row: Any, cfg: RolloutConfig) -> Any:
        self.last = self.prompt_fn(row, cfg)
        return self.last


class Replay:
    """A generator for one conversation playing `outputs` in order; `steps` gets (messages, tools, ids) per call."""

    def __init__(self, tokenizer: Any, outputs: list[str], recorder: Recorder) -> None:
        self.tokenizer, self.outputs, self.recorder = tokenizer, outputs, recorder
        self.steps: list[tuple[list[dict[str, Any]], Any, list[int]]] = []

    def generate(self, prompt_token_ids: Any, **kwargs: Any) -> list[GenerationOutput]:
        (ids,) = prompt_token_ids
        messages, tools = copy.deepcopy(self.recorder.last)
        self.steps.append((messages, tools, list(ids)))
        text = self.outputs[len(self.steps) - 1] + "<|im_end|>"
        return [GenerationOutput(self.tokenizer.encode(text, add_special_tokens=False), "stop")]


def replay(entry: Any, tokenizer: Any, prompt_fn: Any, repeat: int = 1) -> tuple[Conversation, list[tuple[list[dict[str, Any]], Any, list[int]]]]:
    """Roll `entry` out once through run_conversations playing its gold `script`; the conversation and its steps."""
    recorder = Recorder(prompt_fn)
    gen = Replay(tokenizer, script(entry, repeat), recorder)
    (conv,) = run_conversations([entry], n=1, generator=gen, tokenizer=tokenizer, cfg=ROLLOUT, seed=0, prompt_fn=recorder)
    return conv, gen.steps
