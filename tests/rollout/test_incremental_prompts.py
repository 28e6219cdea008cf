"""Incremental prompt tokenising (slca.rollout.chat.encode_prompts): at every step of every conversation the
ids equal the tokenizer's encoding of the whole text, including texts built to break a cut at `<|im_end|>`."""

from __future__ import annotations

from typing import Any

import pytest

from slca.rollout.chat import ChatFormat, PromptCache, PromptTokens, encode_prompts

END = "<|im_end|>"
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city.",
                                            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}


def _turn(role: str, content: str) -> dict[str, str]:
    return {"role": role, "content": content}


# Each conversation grows a message at a time; some steps rewrite earlier messages, as a template or a
# protocol may (thinking dropped from earlier turns, history folded into one user turn).
HOSTILE: list[list[list[dict[str, str]]]] = [
    [  # the end-of-turn token, its fragments and the start token inside message text
        [_turn("system", "Be terse."), _turn("user", f"say {END} twice {END}{END}")],
        [_turn("system", "Be terse."), _turn("user", f"say {END} twice {END}{END}"), _turn("assistant", "<|im_en" + "d|> <|im_start|>user\nfake")],
        [_turn("system", "Be terse."), _turn("user", f"say {END} twice {END}{END}"), _turn("assistant", "<|im_en" + "d|> <|im_start|>user\nfake"),
         _turn("user", "<|im_" + "\n" + END)],
    ],
    [  # whitespace at every cut: CRLF, trailing spaces, leading newlines, tabs, an empty message
        [_turn("user", "  \r\n\t")],
        [_turn("user", "  \r\n\t"), _turn("assistant", "\n\n lead"), _turn("tool", "")],
        [_turn("user", "  \r\n\t"), _turn("assistant", "\n\n lead"), _turn("tool", ""), _turn("tool", "trail   \n\n")],
    ],
    [  # text whose characters combine across a cut: combining marks, ZWJ emoji, digits, CJK
        [_turn("user", "e\u0301\u0301")],
        [_turn("user", "e\u0301\u0301"), _turn("assistant", "\u0301\u200d\U0001f468\u200d\U0001f469\u200d\U0001f467 1234567890")],
        [_turn("user", "e\u0301\u0301"), _turn("assistant", "\u0301\u200d\U0001f468\u200d\U0001f469\u200d\U0001f467 1234567890"),
         _turn("user", "\u4f60\u597d\uff01" * 50 + "\u0301")],
    ],
    [  # an earlier turn rewritten (reasoning dropped), then the conversation shrinks, then starts over
        [_turn("user", "q1"), _turn("assistant", "<think>\nlong reasoning\n</think>\n\n[f(1)]"), _turn("tool", "ok")],
        [_turn("user", "q1"), _turn("assistant", "[f(1)]"), _turn("tool", "ok"), _turn("user", "q2")],
        [_turn("user", "q1")],
        [_turn("user", "something else entirely " * 40)],
    ],
]


def _steps(tokenizer: Any, tools: Any) -> list[list[str]]:
    fmt = ChatFormat(tokenizer)
    return [[fmt.render_prompt(messages, tools) for messages in conv] for conv in HOSTILE]


def _check(fmt: ChatFormat, conversations: list[list[str]]) -> int:
    """Every step of every conversation, all conversations batched per step as the loops batch them."""
    states = [PromptTokens() for _ in conversations]
    checked = 0
    for step in range(max(len(c) for c in conversations)):
        live = [(s, c[step]) for s, c in zip(states, conversations) if step < len(c)]
        got = encode_prompts(fmt, [s for s, _ in live], [t for _, t in live])
        for (_, text), ids in zip(live, got):
            assert ids == fmt.tokenizer.encode(text, add_special_tokens=False), (step, text[-200:])
            checked += 1
    return checked


@pytest.mark.parametrize("with_tools", [False, True])
def test_hostile_conversations_tokenise_incrementally_to_the_ids_of_the_whole_text_with_the_tiny_template(tokenizer, with_tools) -> None:
    fmt = ChatFormat(tokenizer)
    assert fmt.splits_at_turn_end  # byte-level BPE with <|im_end|> an added token: the fast path is under test
    assert _check(fmt, _steps(tokenizer, [WEATHER] if with_tools else None)) == sum(len(c) for c in HOSTILE)


def test_raw_texts_cut_anywhere_tokenise_to_the_ids_of_the_whole_text(tokenizer) -> None:
    fmt = ChatFormat(tokenizer)
    base = f"a{END}\n{END}{END} b <|im_start|>user\n\u0301x{END}"
    texts = [base[:i] for i in range(len(base) + 1)] + [base * 3, "", END, base[::-1]]
    assert _check(fmt, [texts, texts[::-1]]) == 2 * len(texts)


def test_a_prompt_cache_gives_every_text_the_ids_of_the_whole_text_across_batches_and_after_it_is_dropped(tokenizer) -> None:
    fmt = ChatFormat(tokenizer)
    texts = [t for conv in _steps(tokenizer, [WEATHER]) for t in conv]
    cache = PromptCache(max_tokens=200)  # small: the pieces are dropped and tokenised again mid-way
    for batch in (texts, texts[::-1], texts[:3] + texts[:3]):
        assert cache.encode(fmt, batch) == [tokenizer.encode(t, add_special_tokens=False) for t in batch]


def test_a_prompt_cache_keeps_rendered_texts_of_the_last_builder_only() -> None:
    cache, first, second = PromptCache(), object(), object()
    assert cache.text(first, 0) is None
    cache.keep_text(first, 0, "a")
    assert cache.text(first, 0) == "a" and cache.text(first, 1) is None
    assert cache.text(second, 0) is None  # another cell: its own prompts
    cache.keep_text(first, 0, "stale")  # a builder no longer current keeps nothing
    assert cache.text(second, 0) is None and cache.text(first, 0) is None


@pytest.mark.slow
def test_hostile_conversations_tokenise_incrementally_under_qwens_own_templates() -> None:
    from transformers import AutoTokenizer

    from slca.models.real_files import QWEN_TOKENIZERS, qwen_tokenizer_dir

    for name in QWEN_TOKENIZERS:
        tokenizer = AutoTokenizer.from_pretrained(qwen_tokenizer_dir(name))
        fmt = ChatFormat(tokenizer)
        assert fmt.splits_at_turn_end, name
        assert _check(fmt, _steps(tokenizer, [WEATHER])) == sum(len(c) for c in HOSTILE), name


def test_a_tokenizer_that_reads_a_cut_differently_is_tokenised_whole_and_stays_exact() -> None:
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    # SentencePiece-style: a space is prepended to the start of each encode call only, so "b" after a
    # cut would read as " b" when the cut is encoded alone.
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
    tok.decoder = decoders.Metaspace(prepend_scheme="first")
    tok.train_from_iterator(["a b c user assistant hello world"] * 20,
                            trainers.BpeTrainer(vocab_size=200, special_tokens=["<unk>"], show_progress=False))
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in (END, "<|im_start|>")])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=END, unk_token="<unk>")
    whole, cut = (tokenizer.encode(t, add_special_tokens=False) for t in (f"a{END}b", "b"))
    assert whole[2:] != cut  # the hazard is real for this tokenizer
    fmt = ChatFormat(tokenizer)
    assert not fmt.splits_at_turn_end
    texts = [f"hello{END}", f"hello{END}world b", f"hello{END}world b{END}c"]
    assert _check(fmt, [texts]) == len(texts)
    assert PromptCache().encode(fmt, texts) == [tokenizer.encode(t, add_special_tokens=False) for t in texts]
