"""BFCL's multi-turn protocol on slca's rollout pieces (docs/bfcl.md#multi-turn-protocol).

Per turn: append the turn's user message; then loop model → decode → execute → observations until
a step makes no readable call; the next turn follows. All conversations of a batch advance together,
one generator call per round. Each step's prompt is the whole conversation rendered under the
protocol cell (system prompt, template construction, thinking retention) by slca's prompt protocol
and chat format, so every fragility factor applies to earlier turns as it does in any benchmark.

Held-out functions (`miss_func`) arrive on their empty turn with BFCL's fixed user message: when the
cell's system prompt shows the tools, the message lists the new functions (BFCL's prompting text);
otherwise they join the tools the chat template renders (BFCL's function-calling text).

Termination, as in BFCL: more than MAXIMUM_STEP_LIMIT steps with calls in one turn force-quit the
conversation (its later turns are never asked, so it fails unless it was the last turn); a prompt
over `max_prompt_length` tokens ends it the same way (`prompt_overflow`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from slca.evaluation.bfcl.multi_turn.calls import Call, decode
from slca.evaluation.bfcl.multi_turn.data import MultiTurnEntry
from slca.evaluation.bfcl.multi_turn.environment import Environment
from slca.rollout.chat import ChatFormat, PromptTokens, encode_prompts
from slca.rollout.config import RolloutConfig
from slca.rollout.loop import round_seed

DONE, STEP_LIMIT, PROMPT_OVERFLOW = "done", "step_limit", "prompt_overflow"


def bfcl_constants() -> tuple[int, str, str]:
    """(step limit per turn, held-out message when the prompt shows the tools, when the template does)."""
    from bfcl_eval.constants.default_prompts import (
        DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC,
        DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING,
        MAXIMUM_STEP_LIMIT,
    )

    return MAXIMUM_STEP_LIMIT, DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING, DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC


@dataclass
class Conversation:
    """One rollout of one entry: its own environment, its messages, and what the model did per turn.

    decoded: per turn, the calls of each step that made calls (what the checker replays);
    outputs: per turn, the text of every step; finish: "" while running, else DONE, STEP_LIMIT or
    PROMPT_OVERFLOW; overflow_tokens: the length of the prompt that overflowed (0 when none did);
    tokens: the last prompt's ids by turn, so the next step tokenises only what it adds.
    """

    entry: MultiTurnEntry
    sample: int
    env: Environment
    tools: list[dict[str, Any]]
    messages: list[dict[str, Any]] = field(default_factory=list)
    decoded: list[list[tuple[Call, ...]]] = field(default_factory=list)
    outputs: list[list[str]] = field(default_factory=list)
    steps_in_turn: int = 0
    finish: str = ""
    overflow_tokens: int = 0
    tokens: PromptTokens = field(default_factory=PromptTokens)

    @property
    def turn(self) -> int:
        return len(self.decoded) - 1


def _next_turn(conv: Conversation, prompt_fn: Any, cfg: RolloutConfig) -> None:
    """Start the conversation's next turn (or finish it after the last)."""
    turn = conv.turn + 1
    if turn >= len(conv.entry.turns):
        conv.finish = DONE
        return
    conv.decoded.append([])
    conv.outputs.append([])
    conv.steps_in_turn = 0
    arriving = conv.entry.held_out.get(turn)
    if arriving is None:
        conv.messages.extend(dict(m) for m in conv.entry.turns[turn])
        return
    _, prompting, fc = bfcl_constants()
    # A held-out turn is never the first, so the conversation already has messages to render.
    _, template_tools = prompt_fn({"prompt": conv.messages, "tools": conv.tools}, cfg)
    if template_tools is None and conv.tools:  # the system prompt shows the tools: BFCL's prompting text, docs as str() of the list
        conv.messages.append({"role": "user", "content": prompting.format(functions=list(arriving))})
    else:
        conv.tools = conv.tools + conv.entry.held_out_tools(turn)
        conv.messages.append({"role": "user", "content": fc})


def run_conversations(entries: Sequence[MultiTurnEntry], *, n: int, generator: Any, tokenizer: Any, cfg: RolloutConfig,
                      seed: int, prompt_fn: Any) -> list[Conversation]:
    """Roll every entry out n times (entry-major) under one protocol cell's `prompt_fn`; see the module docstring.

    cfg: the evaluation's rollout settings (max_prompt_length per step prompt; each step generates at
    most max_turn_tokens, else max_response_length tokens; temperature, top_p, template settings).
    """
    step_limit = bfcl_constants()[0]
    fmt = ChatFormat(tokenizer)
    cap = min(cfg.max_response_length, cfg.max_turn_tokens or cfg.max_response_length)
    convs = [Conversation(e, s, Environment.for_entry(e), e.tools) for e in entries for s in range(n)]
    for conv in convs:
        _next_turn(conv, prompt_fn, cfg)
    active = [c for c in convs if not c.finish]
    round_index = 0
    while active:
        texts = []
        for conv in active:
            messages, tools = prompt_fn({"prompt": conv.messages, "tools": conv.tools}, cfg)
            texts.append(fmt.render_prompt(messages, tools))
        prompts = encode_prompts(fmt, [conv.tokens for conv in active], texts)
        ready = []
        for conv, ids in zip(active, prompts):
            if len(ids) > cfg.max_prompt_length:
                conv.finish = PROMPT_OVERFLOW
                conv.overflow_tokens = len(ids)
            else:
                ready.append((conv, ids))
        if not ready:
            break
        outs = generator.generate([ids for _, ids in ready], max_new_tokens=cap, temperature=cfg.temperature, top_p=cfg.top_p,
                                  stop_token_ids=set(fmt.stop_token_ids), seed=round_seed(seed, round_index))
        if len(outs) != len(ready):
            raise RuntimeError(f"generator returned {len(outs)} outputs for {len(ready)} prompts")
        for (conv, _), out in zip(ready, outs):
            text = fmt.decode_solution(out.token_ids)
            conv.outputs[conv.turn].append(text)
            conv.messages.append({"role": "assistant", "content": text})
            parsed = decode(text)
            if not (parsed.ok and parsed.calls):
                _next_turn(conv, prompt_fn, cfg)  # no readable call: the turn is over
                continue
            conv.decoded[conv.turn].append(parsed.calls)
            conv.messages.extend({"role": "tool", "content": r} for r in conv.env.execute(parsed.calls))
            conv.steps_in_turn += 1
            if conv.steps_in_turn > step_limit:
                conv.finish = STEP_LIMIT
        active = [c for c, _ in ready if not c.finish]
        round_index += 1
    return convs
