"""Generator interface and registry: batched sampling from token ids, stopping per sequence."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from slca.registry import Registry
from slca.rollout.types import GenerationOutput


@runtime_checkable
class Generator(Protocol):
    """Samples one continuation per prompt.

    prompt_token_ids: B prompts (no padding). max_new_tokens: one cap per prompt or one for all.
    temperature 0 means greedy; each output stops at its first id in `stop_token_ids` (kept in the
    output) or at its cap; the same seed and inputs give the same outputs.

    A generator whose output for a prompt does not depend on the call's other prompts may declare
    `independent_prompts = True` and take `first_index` (the position of the call's first prompt in its
    round) and `prompt_texts` (the texts the prompts' ids were tokenised from); the rollout loop then
    sends a first round in parts, each part's prompts numbered from there, with their texts. A prompt
    the loop did not tokenise (its keep_prompt_ids=False) comes as an empty id list beside its text.
    """

    def generate(
        self,
        prompt_token_ids: Sequence[Sequence[int]],
        *,
        max_new_tokens: Sequence[int] | int,
        temperature: float,
        top_p: float,
        stop_token_ids: set[int],
        seed: int,
    ) -> list[GenerationOutput]: ...


GENERATORS: Registry[Callable[..., Any]] = Registry("generator")


def register_generator(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator adding a generator class under `name`; registering a name twice is an error."""
    return GENERATORS.register(name)


def get_generator(name: str) -> Callable[..., Any]:
    """The generator class registered under `name` (construct it with its own keyword arguments)."""
    return GENERATORS.get(name)


def per_prompt_caps(max_new_tokens: Sequence[int] | int, n: int) -> list[int]:
    """One non-negative cap per prompt from an int or a length-n sequence."""
    if isinstance(max_new_tokens, int):
        caps = [max_new_tokens] * n
    else:
        caps = [int(m) for m in max_new_tokens]
        if len(caps) != n:
            raise ValueError(f"max_new_tokens has {len(caps)} entries for {n} prompts")
    if any(c < 0 for c in caps):
        raise ValueError("max_new_tokens must be >= 0")
    return caps
