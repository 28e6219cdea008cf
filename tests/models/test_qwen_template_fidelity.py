"""slca's prompt constructions against Qwen2.5's and Qwen3's own chat templates, token for token.

The oracle is the official template of each model (fetched by `make real-models`, loaded with
`AutoTokenizer.from_pretrained`) applied to an independently written OpenAI-style copy of each
conversation (tests/models/qwen_conversations.py): 200 seeded conversations per model.
"""

from __future__ import annotations

import pytest

from slca.toolcall.templates import HISTORY_HEADING, QUESTION_HEADING, render
from tests.models.qwen_conversations import Conversation, conversations

N_CONVERSATIONS = 200
# Qwen2.5 has no reasoning field in its template: thinking reaches it only as `<think>` text in the content.
THINKING_MODES = {"qwen2.5": ("none", "inline"), "qwen3": ("none", "inline", "field")}
IM_END = "<|im_end|>\n"


@pytest.fixture(scope="module")
def qwens(qwen_tokenizers):
    """Model name → (name, Qwen's tokenizer, the seeded conversations for it)."""
    return {name: (name, qwen_tokenizers[name], conversations(28, N_CONVERSATIONS, modes)) for name, modes in THINKING_MODES.items()}


@pytest.fixture(params=sorted(THINKING_MODES))
def qwen(request, qwens):
    return qwens[request.param]


def qwen_render(tok, conv: Conversation, *, earlier_thinking: bool = True) -> str:
    return tok.apply_chat_template(conv.qwen_messages(earlier_thinking=earlier_thinking), tools=conv.tools,
                                   tokenize=False, add_generation_prompt=True)


def slca_render(tok, conv: Conversation, construction: str, thinking: str) -> str:
    return render(conv.slca_messages(), conv.tools, tokenizer=tok, construction=construction, thinking=thinking)


def test_the_conversations_cover_parallel_calls_tool_errors_empty_arguments_unicode_and_thinking(qwen):
    _, _, convs = qwen
    steps = [s for c in convs for _, turn in c.turns for s in turn]
    assert len(convs) >= 200
    assert sum(len(s.calls) >= 2 for s in steps) >= 50
    assert sum(len(c.turns) >= 2 for c in convs) >= 50 and sum(len(t) >= 2 for c in convs for _, t in c.turns) >= 50
    assert any("error" in r.lower() for s in steps for r in s.responses)
    assert any(args == {} for s in steps for _, args in s.calls)
    assert any(not q.isascii() for c in convs for q, _ in c.turns)
    assert sum(s.thought is not None for s in steps) >= 50


@pytest.mark.parametrize("thinking", ["keep", "drop"])
def test_native_construction_equals_qwens_own_rendering_token_for_token(qwen, thinking):
    _, tok, convs = qwen
    mine = [slca_render(tok, c, "native", thinking) for c in convs]
    # `drop` removes the thinking of turns before the last question; Qwen's own rendering of the same
    # conversation written without it is the oracle.
    theirs = [qwen_render(tok, c, earlier_thinking=thinking == "keep") for c in convs]
    # Equal text is equal tokens under one tokenizer; the rollout tests compare token ids.
    assert mine == theirs


def _earlier_thoughts(conv: Conversation) -> int:
    return sum(s.thought is not None for _, steps in conv.turns[:-1] for s in steps)


def test_dropping_earlier_thinking_removes_exactly_the_earlier_think_blocks_for_qwen2_5_and_nothing_for_qwen3(qwen):
    name, tok, convs = qwen
    changed = 0
    for c in convs:
        keep, drop = slca_render(tok, c, "native", "keep"), slca_render(tok, c, "native", "drop")
        if name == "qwen3":
            # Qwen3's template itself drops the reasoning of turns before the last question.
            assert keep == drop
            continue
        cut = keep.rindex(f"<|im_start|>user\n{c.turns[-1][0]}{IM_END}")
        earlier = keep[:cut]
        for _, steps in c.turns[:-1]:
            for s in steps:
                if s.thought is not None:
                    # Qwen2.5 writes "\n" + content before the calls only when the content is not empty.
                    block = ("\n" if s.calls and not s.text else "") + f"<think>\n{s.thought}\n</think>\n\n"
                    assert block in earlier
                    earlier = earlier.replace(block, "", 1)
        assert drop == earlier + keep[cut:]
        changed += keep != drop
    assert name == "qwen3" or changed >= 20


def test_context_construction_moves_only_the_earlier_turns_into_one_user_turn(qwen):
    name, tok, convs = qwen
    moved = 0
    for c in convs:
        for thinking in ("keep", "drop"):
            native, context = slca_render(tok, c, "native", thinking), slca_render(tok, c, "context", thinking)
            if len(c.turns) == 1:
                assert context == native  # no history: nothing to move
                continue
            question = c.turns[-1][0]
            head = native[: native.index(IM_END) + len(IM_END)]  # the system turn (tools included)
            ask = f"<|im_start|>user\n{question}{IM_END}"
            tail = native[native.rindex(ask) + len(ask) :]  # the current turn's own steps
            assert context.startswith(head + "<|im_start|>user\n" + HISTORY_HEADING)
            assert context.endswith(f"\n\n{QUESTION_HEADING}\n{question}{IM_END}" + tail)
            history = context[len(head) : len(context) - len(tail)]
            assert history.count("<|im_start|>") == 1 and history.count(IM_END) == 1
            for q, steps in c.turns[:-1]:
                assert q in history and all(r in history for s in steps for r in s.responses)
            # In context, earlier thinking is text of the user turn: no template can drop it, so
            # `thinking` alone decides (Qwen3 drops it itself only in native).
            if c.thinking == "inline" and _earlier_thoughts(c):
                assert ("<think>" in history) == (thinking == "keep")
            moved += 1
    assert moved >= 100


def test_slcas_own_chatml_renderer_equals_qwen2_5_after_the_system_turn(qwens):
    """The built-in renderer (the tiny backbone's template) writes Qwen2.5's turns; its system turn
    is its own (its tools block wording, no "You are Qwen" default). Qwen3 differs from both where
    it renders thinking itself."""
    _, tok, convs = qwens["qwen2.5"]
    for c in convs:
        mine = render(c.slca_messages(), c.tools, construction="native", thinking="keep")
        theirs = qwen_render(tok, c)
        assert mine.startswith("<|im_start|>system\n") and theirs.startswith("<|im_start|>system\n")
        assert mine[mine.index(IM_END):] == theirs[theirs.index(IM_END):]
        assert mine[: mine.index(IM_END)] != theirs[: theirs.index(IM_END)]
