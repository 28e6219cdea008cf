"""Hostile texts and the check of slca.rollout.token_bound on one tokenizer, shared by the tokenizer tests."""

from __future__ import annotations

import random

from slca.rollout.chat import encode_texts
from slca.rollout.token_bound import token_bound


def hostile_texts() -> list[str]:
    rng = random.Random(7)
    planes = [(0x20, 0x7F), (0xA0, 0x2FF), (0x300, 0x36F), (0x900, 0x97F), (0x4E00, 0x4FFF), (0xAC00, 0xAD00),
              (0x1D15E, 0x1D164), (0x1F300, 0x1F6FF), (0xF900, 0xFAFF)]

    def sample(k: int) -> str:
        return "".join(chr(rng.randrange(*rng.choice(planes))) for _ in range(k))

    fixed = [
        "", "a", " ", "1234567890" * 60, "\n\n   \t" * 80, "完成。" * 120, "🙂👍🏽" * 60, "e\u0301" * 150,
        "\u0958\U0001D160\u2126\u212B" * 60,  # NFC decomposes these (composition exclusions, singletons)
        "<|im_start|>user\nhi<|im_end|>\n" * 40, "<tool_call>\n{\"name\": \"f\"}\n</tool_call>" * 30,
        "'s 're 've 'm 'll 'd " * 50, "İ ß ﬁ Å" * 50,
    ]
    return fixed + [sample(rng.randrange(1, 600)) for _ in range(200)]


def assert_bounds(tokenizer, bound) -> None:
    """token_bound(tokenizer) is `bound`, never under the ids of a hostile text, and met exactly by one of them."""
    assert token_bound(tokenizer) is bound
    texts = hostile_texts()
    counts = [len(ids) for ids in encode_texts(tokenizer, texts)]
    over = [(t[:40], c, bound(t)) for t, c in zip(texts, counts) if c > bound(t)]
    assert not over, over[:3]
    assert any(c == bound(t) for t, c in zip(texts, counts) if t)  # tight somewhere: the check can fail
