"""BFCL multi-turn steps tokenise incrementally: at every step of a gold replay the ids the generator gets
equal the tokenizer's encoding of the whole conversation re-rendered by the chat template itself.

The suite checks a deterministic sample: in each of the four categories the first entry and the entry
with the most gold calls, under two protocol cells (native construction keeping thinking with BFCL's
system prompt; context construction dropping thinking with no system prompt, so the template renders
the tools), with the tiny template and Qwen3's own (which rewrites earlier turns itself), marked slow;
the fast test takes the longest `base` entry (natively) and the first `miss_func` entry (its held-out
turn; in context). `benchmarks/multi_turn_steps.py --check` replays every entry of every category.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from slca.evaluation.bfcl.multi_turn import CATEGORIES, load_category
from slca.evaluation.bfcl.multi_turn.loop import DONE
from slca.rollout.protocol import protocol_prompt_fn
from tests.evaluation.gold_replay import replay, script

CELLS = (("native", "keep", "bfcl_default"), ("context", "drop", "none"))


def sample() -> list[Any]:
    """Per category, the first entry and the one whose replay takes the most steps."""
    chosen = []
    for name in CATEGORIES:
        first, longest = load_category(name, limit=1).entries[0], _longest(name)
        chosen += [first] + ([longest] if longest.id != first.id else [])
    return chosen


def _tiny_tokenizer(entries: list[Any]) -> Any:
    from slca.config.groups.backbone import TinyBackbone
    from slca.models.tiny import train_tokenizer

    return train_tokenizer([json.dumps([e.turns, e.functions]) for e in entries], TinyBackbone(vocab_size=4096))


def _full_render_ids(tokenizer: Any, messages: list[dict[str, Any]], tools: Any) -> list[int]:
    text = tokenizer.apply_chat_template(messages, tools=tools or None, add_generation_prompt=True, tokenize=False)
    return tokenizer.encode(text, add_special_tokens=False)


def _longest(name: str) -> Any:
    return max(load_category(name).entries, key=lambda e: len(script(e)))


def _check(tokenizer: Any, entries: list[Any], cells: Any = CELLS) -> int:
    steps_checked = 0
    for construction, thinking, system_prompt in cells:
        prompt_fn = protocol_prompt_fn(system_prompt=system_prompt, construction=construction, thinking=thinking)
        for entry in entries:
            conv, steps = replay(entry, tokenizer, prompt_fn)
            assert conv.finish == DONE and len(steps) == len(script(entry)), (entry.id, conv.finish)
            for k, (messages, tools, ids) in enumerate(steps):
                assert ids == _full_render_ids(tokenizer, messages, tools), (entry.id, construction, k)
            steps_checked += len(steps)
    return steps_checked


def test_every_step_of_the_longest_and_a_held_out_gold_replay_gets_the_ids_of_a_full_re_render() -> None:
    longest, held_out = _longest("base"), load_category("miss_func", limit=1).entries[0]
    tokenizer = _tiny_tokenizer([longest, held_out])
    assert _check(tokenizer, [longest], CELLS[:1]) == len(script(longest)) == 16  # one step per gold call, one more per turn
    assert _check(tokenizer, [held_out], CELLS[1:]) == len(script(held_out))


@pytest.mark.slow
def test_every_step_of_sampled_gold_replays_gets_the_ids_of_a_full_re_render_under_the_tiny_template() -> None:
    entries = sample()
    assert _check(_tiny_tokenizer(entries), entries) == 2 * sum(len(script(e)) for e in entries)


@pytest.mark.slow
def test_every_step_of_sampled_gold_replays_gets_the_ids_of_a_full_re_render_under_qwen3s_template() -> None:
    from transformers import AutoTokenizer

    from slca.models.real_files import qwen_tokenizer_dir

    entries = sample()
    assert _check(AutoTokenizer.from_pretrained(qwen_tokenizer_dir("qwen3")), entries) == 2 * sum(len(script(e)) for e in entries)
