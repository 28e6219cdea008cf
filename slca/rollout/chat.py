"""What the chat template adds around the policy's turns: prompts, tool-round inserts, stop ids, decoding.

The environment insert after a tool-calling turn (docs/method.md#segments-from-mask-topology "Where the mask comes from") is derived
from the tokenizer's own chat template: a probe conversation with sentinel texts is rendered and
the text between the assistant content and the end (tool messages + generation prompt) is kept as
a pattern, less the end-of-turn token the policy wrote itself. It therefore stays right for the
tiny template and for Qwen's.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from slca.rollout.token_bound import token_bound
from slca.rollout.types import KIND_ENV, KIND_TEXT, KIND_THINKING, KIND_TOOL_CALL

TOOL_CALL_OPEN = "<tool_call>"
IM_END = "<|im_end|>"
# Markup the reward parses: kept in solution_text even when the tokenizer marks it special.
MARKUP_TOKENS = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>")

_PROBE_USER = "@@SLCA_PROBE_USER@@"
_PROBE_ASSISTANT = "@@SLCA_PROBE_ASSISTANT@@"
_PROBE_RESPONSE = "@@SLCA_PROBE_RESPONSE_{}@@"
# Texts on either side of an end-of-turn token: a pre-tokenizer that treats the start of each encode
# call specially (a prepended space, a stripped newline) reads one of them differently when cut there.
_SPLIT_PROBES = (("a b\n", "\n<|im_start|>user\n c"), (" x", " y"), ("1", "2\n"), ("", "<|im_start|>z"))


def single_token_id(tokenizer: Any, text: str) -> int:
    """The id of `text` when the tokenizer encodes it as exactly one token; ValueError otherwise."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    if len(ids) != 1:
        raise ValueError(f"{text!r} must be a single token for the rollout loop to stop on it; got {ids}")
    return int(ids[0])


def control_token_ids(tokenizer: Any) -> frozenset[int]:
    """Ids that verl-style decoding (skip_special_tokens=True) drops, minus the tool/think markup."""
    ids = {int(i) for i in tokenizer.all_special_ids}
    for i, tok in (getattr(tokenizer, "added_tokens_decoder", None) or {}).items():
        if getattr(tok, "special", False):
            ids.add(int(i))
    markup = set()
    for text in MARKUP_TOKENS:
        enc = tokenizer.encode(text, add_special_tokens=False)
        if len(enc) == 1:
            markup.add(int(enc[0]))
    return frozenset(ids - markup)


def token_kinds(ids: Sequence[int], mask: Sequence[int], markup: Mapping[str, int]) -> list[int]:
    """KIND_* per token: environment (mask 0), thinking or tool-call markup regions (tags included), else text.

    markup: ids of "<think>", "</think>", "<tool_call>", "</tool_call>" (missing keys: never matched).
    """
    think_open, think_close = markup.get("<think>", -1), markup.get("</think>", -1)
    call_open, call_close = markup.get("<tool_call>", -1), markup.get("</tool_call>", -1)
    if all(mask) and {think_open, call_open}.isdisjoint(ids):  # no region opens (an evaluation's usual answer): in C
        return [KIND_TEXT] * len(ids)
    kinds: list[int] = []
    state = KIND_TEXT
    for tok, m in zip(ids, mask):
        if not m:
            kinds.append(KIND_ENV)
            state = KIND_TEXT  # an insert always closes the turn
            continue
        if state == KIND_TEXT:
            if tok == think_open:
                state = KIND_THINKING
            elif tok == call_open:
                state = KIND_TOOL_CALL
            kinds.append(state)
            continue
        kinds.append(state)
        if (state == KIND_THINKING and tok == think_close) or (state == KIND_TOOL_CALL and tok == call_close):
            state = KIND_TEXT
    return kinds


class ChatFormat:
    """Chat-template facts the loop needs for one tokenizer.

    template_vars are passed to every apply_chat_template call (e.g. enable_thinking);
    chat_template replaces the tokenizer's own template when given.
    """

    def __init__(self, tokenizer: Any, template_vars: Mapping[str, Any] | None = None, *,
                 chat_template: str | None = None):
        self.tokenizer = tokenizer
        self.template_vars = dict(template_vars or {})
        self.chat_template = chat_template
        self.im_end_id = single_token_id(tokenizer, IM_END)
        # A turn ends only when the policy ends it: Qwen writes one <tool_call> block per parallel call,
        # so stopping at the first </tool_call> would keep only the first call of the turn.
        stops = {self.im_end_id}
        if tokenizer.eos_token_id is not None:
            stops.add(int(tokenizer.eos_token_id))
        self.stop_token_ids: frozenset[int] = frozenset(stops)
        self.control_ids = control_token_ids(tokenizer)
        self.markup_ids: dict[str, int] = {}
        for text in MARKUP_TOKENS:
            enc = tokenizer.encode(text, add_special_tokens=False)
            if len(enc) == 1:
                self.markup_ids[text] = int(enc[0])
        self._env_patterns: dict[int, list[str]] = {}

    @functools.cached_property
    def splits_at_turn_end(self) -> bool:
        """Whether the tokenizer reads the text on either side of `<|im_end|>` independently (probed on
        first use), so prompts may be tokenised piece by piece (`encode_prompts`, `PromptCache`)."""
        return all(self._encode(a + IM_END + b) == self._encode(a + IM_END) + self._encode(b) for a, b in _SPLIT_PROBES)

    @functools.cached_property
    def token_bound(self) -> Callable[[str], int] | None:
        """An upper bound on a text's token count without tokenising it, where the tokenizer gives one
        (slca.rollout.token_bound)."""
        return token_bound(self.tokenizer)

    def _encode(self, text: str) -> list[int]:
        return [int(i) for i in self.tokenizer.encode(text, add_special_tokens=False)]

    def _render(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] | None,
                add_generation_prompt: bool) -> str:
        text = self.tokenizer.apply_chat_template(
            list(messages), tools=list(tools) if tools else None, add_generation_prompt=add_generation_prompt,
            tokenize=False, chat_template=self.chat_template, **self.template_vars)
        if not isinstance(text, str):
            raise TypeError(f"apply_chat_template(tokenize=False) returned {type(text).__name__}, not str")
        return text

    def render_prompt(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] | None = None) -> str:
        """The prompt text: the conversation plus the assistant generation prompt."""
        return self._render(messages, tools, add_generation_prompt=True)

    def env_pattern(self, k: int) -> list[str]:
        """k+1 text pieces; the insert for k tool responses is pieces[0] + r0 + pieces[1] + … + pieces[k]."""
        if k < 1:
            raise ValueError("a tool round has at least one response")
        cached = self._env_patterns.get(k)
        if cached is not None:
            return cached
        probe = [{"role": "user", "content": _PROBE_USER}, {"role": "assistant", "content": _PROBE_ASSISTANT}]
        probe += [{"role": "tool", "content": _PROBE_RESPONSE.format(i)} for i in range(k)]
        text = self._render(probe, None, add_generation_prompt=True)
        if text.count(_PROBE_ASSISTANT) != 1:
            raise ValueError("chat template does not render assistant content verbatim; cannot derive tool inserts")
        rest = text[text.index(_PROBE_ASSISTANT) + len(_PROBE_ASSISTANT) :]
        # The policy's own end-of-turn token (a stop id, mask 1) already closed the turn.
        rest = rest.removeprefix(IM_END)
        pieces = []
        for i in range(k):
            mark = _PROBE_RESPONSE.format(i)
            if rest.count(mark) != 1:
                raise ValueError(f"chat template does not render tool message {i} verbatim exactly once")
            head, rest = rest.split(mark)
            pieces.append(head)
        pieces.append(rest)
        self._env_patterns[k] = pieces
        return pieces

    def env_text(self, responses: Sequence[str]) -> str:
        """Text appended after a tool-calling turn the policy closed with `<|im_end|>`: the rest of the turn
        close, the tool messages and the next generation prompt."""
        pieces = self.env_pattern(len(responses))
        out = [pieces[0]]
        for r, p in zip(responses, pieces[1:]):
            out += [r, p]
        return "".join(out)

    def decode_solution(self, ids: Sequence[int]) -> str:
        """Decode like verl's reward manager (special tokens skipped) but keep the tool/think markup."""
        return self.decode_solutions([ids])[0]

    def decode_solutions(self, batch: Sequence[Sequence[int]]) -> list[str]:
        """`decode_solution` of each id list, in one call."""
        control = self.control_ids
        return decode_texts(self.tokenizer, [[i for i in ids if i not in control] for ids in batch])


@dataclass
class PromptTokens:
    """The last prompt of one conversation cut into pieces, each ending with `<|im_end|>` (the last one
    need not), and the token count after each piece: what `encode_prompts` reuses at the next step."""

    pieces: list[str] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)


def encode_texts(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    """tokenizer(texts, add_special_tokens=False)["input_ids"]; a fast tokenizer's backend is called directly,
    since the wrapper's per-text conversion costs as much as tokenising a short piece."""
    if not texts:
        return []
    backend = getattr(tokenizer, "backend_tokenizer", None)
    # A truncating or padding call through the wrapper leaves that setting on the backend until the next one.
    if backend is not None and backend.truncation is None and backend.padding is None:
        # encode_batch_fast (tokenizers >= 0.21) computes no character offsets: the same ids in about 70% of the time.
        encode = getattr(backend, "encode_batch_fast", backend.encode_batch)
        return [e.ids for e in encode(list(texts), add_special_tokens=False)]
    return [list(ids) for ids in tokenizer(list(texts), add_special_tokens=False, verbose=False)["input_ids"]]


def decode_texts(tokenizer: Any, ids: Sequence[Sequence[int]]) -> list[str]:
    """tokenizer.batch_decode(ids, skip_special_tokens=False). A fast tokenizer that decodes as its backend
    does (no optional space clean-up, no decode of its own) is decoded by the backend directly: batch_decode
    checks every id in Python first, about half the time of decoding a long text."""
    if not ids:
        return []
    backend = getattr(tokenizer, "backend_tokenizer", None)
    plain = getattr(type(tokenizer), "_decode", None)
    if (backend is not None and getattr(tokenizer, "clean_up_tokenization_spaces", True) is False
            and getattr(plain, "__qualname__", "") == "TokenizersBackend._decode"):
        return backend.decode_batch(list(ids), skip_special_tokens=False)
    return tokenizer.batch_decode(list(ids), skip_special_tokens=False)


def _pieces(text: str) -> list[str]:
    parts = text.split(IM_END)
    pieces = [p + IM_END for p in parts[:-1]]
    if parts[-1]:
        pieces.append(parts[-1])
    return pieces


def encode_prompts(fmt: ChatFormat, states: Sequence[PromptTokens], texts: Sequence[str]) -> list[list[int]]:
    """The token ids of each text, as `fmt.tokenizer` encodes it whole, tokenising only what changed since
    the same state's last text: the leading pieces equal to the last text's keep their ids (a template
    that re-renders an earlier turn, as Qwen3's drops old reasoning, re-tokenises from that turn on).

    Cutting after `<|im_end|>` changes no id when the tokenizer reads an added token's two sides
    independently (HF tokenizers split on added tokens first); `fmt.splits_at_turn_end` probed that, and
    without it every text is tokenised whole. All new pieces go to the tokenizer in one batch.
    """
    if not fmt.splits_at_turn_end:
        encoded = encode_texts(fmt.tokenizer, texts)
        for state, ids in zip(states, encoded):
            state.pieces, state.ends, state.ids = [], [], list(ids)
        return encoded
    plans = []
    fresh: list[str] = []
    for state, text in zip(states, texts):
        pieces = _pieces(text)
        keep = 0
        for old, new in zip(state.pieces, pieces):
            if old != new:
                break
            keep += 1
        plans.append((pieces, keep, len(fresh)))
        fresh.extend(pieces[keep:])
    new_ids = encode_texts(fmt.tokenizer, fresh)
    out = []
    for state, (pieces, keep, first) in zip(states, plans):
        ids = state.ids[: state.ends[keep - 1]] if keep else []
        ends = state.ends[:keep]
        for piece_ids in new_ids[first : first + len(pieces) - keep]:
            ids.extend(piece_ids)
            ends.append(len(ids))
        state.pieces, state.ends, state.ids = pieces, ends, ids
        out.append(list(ids))
    return out


class PromptCache:
    """What the prompt batches of one evaluation share, kept between its `run_rollouts` calls over one row list:

    - each row's rendered prompt under the last prompt builder seen (the seeds of a protocol cell render
      the same prompts; another builder starts afresh, so only one cell's texts are held);
    - the ids of every piece (a prompt cut after each `<|im_end|>`) tokenised so far: rows offering the
      same tools share their system turn, and cells that change nothing a row has (thinking or history
      construction on a one-turn prompt) share whole prompts. Held as 4-byte arrays, dropped all at once
      past `max_tokens`.
    """

    def __init__(self, max_tokens: int = 20_000_000) -> None:
        self.max_tokens = max_tokens
        self._builder: object = None
        self._texts: dict[int, str] = {}
        self._pieces: dict[str, array] = {}
        self._tokens = 0

    def text(self, builder: object, index: int) -> str | None:
        """The prompt of row `index` under `builder` when rendered before, else None."""
        if builder is not self._builder:
            self._builder, self._texts = builder, {}
        return self._texts.get(index)

    def keep_text(self, builder: object, index: int, text: str) -> None:
        if builder is self._builder:
            self._texts[index] = text

    def encode(self, fmt: ChatFormat, texts: Sequence[str]) -> list[list[int]]:
        """The ids of each text, as `fmt.tokenizer` encodes it whole; only pieces not seen before are tokenised."""
        if not fmt.splits_at_turn_end:
            return encode_texts(fmt.tokenizer, texts)
        split = [_pieces(t) for t in texts]
        missing = list(dict.fromkeys(p for pieces in split for p in pieces if p not in self._pieces))
        if missing:
            if self._tokens > self.max_tokens:
                self._pieces, self._tokens = {}, 0
                missing = list(dict.fromkeys(p for pieces in split for p in pieces))
            for piece, ids in zip(missing, encode_texts(fmt.tokenizer, missing)):
                self._pieces[piece] = array("i", ids)
                self._tokens += len(ids)
        out = []
        for pieces in split:
            ids: list[int] = []
            for p in pieces:
                ids.extend(self._pieces[p])
            out.append(ids)
        return out
