"""`hf` generator: batched sampling with a transformers causal LM and its KV cache.

A hand-written loop rather than `model.generate`: it stops each sequence at the first id of a set,
draws from one seeded torch.Generator, prefills identical prompts once (a GRPO group's n samples),
and drops finished rows from the batch (and the cache) so long and short continuations do not pay
for each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from slca.rollout.generators.base import per_prompt_caps, register_generator
from slca.rollout.types import GenerationOutput


def sample_next(logits: Any, *, temperature: float, top_p: float, generator: Any) -> tuple[Any, Any]:
    """Next tokens and their log-probabilities from last-position logits.

    logits: [B, V] float. temperature 0 → argmax; otherwise softmax(logits / T) restricted to the
    smallest set of tokens whose mass reaches top_p (the most likely token always kept).
    Returns (tokens [B] long, logprobs [B] float) where logprobs are log softmax(logits / T)
    (raw logits when greedy), before the top-p cut.
    """
    import torch

    logits = logits.float()
    scaled = logits if temperature == 0 else logits / temperature
    logp = torch.log_softmax(scaled, dim=-1)
    if temperature == 0:
        tokens = torch.argmax(scaled, dim=-1)
    else:
        probs = logp.exp()
        if top_p < 1.0:
            sorted_p, order = torch.sort(probs, dim=-1, descending=True)
            # drop a token when the mass before it already reaches top_p
            drop = (torch.cumsum(sorted_p, dim=-1) - sorted_p) >= top_p
            sorted_p = sorted_p.masked_fill(drop, 0.0)
            probs = torch.zeros_like(probs).scatter(-1, order, sorted_p)
        tokens = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
    return tokens, logp.gather(-1, tokens[:, None]).squeeze(-1)


@register_generator("hf")
class HFGenerator:
    """Batched sampling from a transformers causal LM (left padding, KV cache, per-row stopping).

    model: a causal LM taking (input_ids, attention_mask, position_ids, past_key_values, use_cache).
    pad_token_id: id used for left padding (never attended to).
    max_batch_size: prompts per forward batch at most (None: all at once).
    """

    def __init__(self, model: Any, *, pad_token_id: int, max_batch_size: int | None = None):
        if max_batch_size is not None and max_batch_size < 1:
            raise ValueError("max_batch_size must be >= 1")
        self.model = model
        self.pad_token_id = int(pad_token_id)
        self.max_batch_size = max_batch_size

    def generate(
        self,
        prompt_token_ids: Sequence[Sequence[int]],
        *,
        max_new_tokens: Sequence[int] | int,
        temperature: float = 1.0,
        top_p: float = 1.0,
        stop_token_ids: set[int] = frozenset(),
        seed: int = 0,
    ) -> list[GenerationOutput]:
        import torch

        prompts = [list(p) for p in prompt_token_ids]
        if any(not p for p in prompts):
            raise ValueError("every prompt needs at least one token")
        caps = per_prompt_caps(max_new_tokens, len(prompts))
        device = next(self.model.parameters()).device
        rng = torch.Generator(device=device).manual_seed(int(seed))
        step = self.max_batch_size or max(len(prompts), 1)
        outputs: list[GenerationOutput] = []
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.inference_mode():
                for lo in range(0, len(prompts), step):
                    outputs.extend(self._chunk(prompts[lo : lo + step], caps[lo : lo + step], temperature, top_p,
                                               stop_token_ids, rng, device))
        finally:
            self.model.train(was_training)
        return outputs

    def _chunk(self, prompts: list[list[int]], caps: list[int], temperature: float, top_p: float,
               stop_token_ids: set[int], rng: Any, device: Any) -> list[GenerationOutput]:
        import torch

        b = len(prompts)
        tokens: list[list[int]] = [[] for _ in range(b)]
        logprobs: list[list[float]] = [[] for _ in range(b)]
        reasons: list[str] = ["length"] * b
        live = [i for i in range(b) if caps[i] > 0]
        if not live:
            return [GenerationOutput([], "length", []) for _ in range(b)]
        # Identical prompts (the n samples of a GRPO group) are prefilled once, then the cache is copied.
        uniq: dict[tuple[int, ...], int] = {}
        owner = [uniq.setdefault(tuple(prompts[i]), len(uniq)) for i in live]
        width = max(len(p) for p in uniq)
        input_ids = torch.full((len(uniq), width), self.pad_token_id, dtype=torch.long)
        attn = torch.zeros((len(uniq), width), dtype=torch.long)
        for p, r in uniq.items():
            input_ids[r, width - len(p) :] = torch.tensor(p, dtype=torch.long)
            attn[r, width - len(p) :] = 1
        input_ids, attn = input_ids.to(device), attn.to(device)
        positions = (attn.cumsum(-1) - 1).clamp(min=0)
        stops = torch.tensor(sorted(stop_token_ids), dtype=torch.long, device=device)
        out = self.model(input_ids=input_ids, attention_mask=attn, position_ids=positions, use_cache=True,
                         logits_to_keep=1)
        cache, logits = out.past_key_values, out.logits[:, -1, :]
        last_pos = positions[:, -1]
        if len(uniq) < len(live):
            idx = torch.tensor(owner, dtype=torch.long, device=device)
            cache.batch_select_indices(idx)
            logits, attn, last_pos = logits[idx], attn[idx], last_pos[idx]
        while True:
            nxt, lp = sample_next(logits, temperature=temperature, top_p=top_p, generator=rng)
            done = torch.isin(nxt, stops) if len(stops) else torch.zeros_like(nxt, dtype=torch.bool)
            nxt_list, lp_list, done_list = nxt.tolist(), lp.tolist(), done.tolist()
            keep: list[int] = []
            for r, i in enumerate(live):
                tokens[i].append(nxt_list[r])
                logprobs[i].append(lp_list[r])
                if done_list[r]:
                    reasons[i] = "stop"
                elif len(tokens[i]) < caps[i]:
                    keep.append(r)
            if not keep:
                break
            if len(keep) < len(live):
                idx = torch.tensor(keep, dtype=torch.long, device=device)
                cache.batch_select_indices(idx)
                attn, last_pos, nxt = attn[idx], last_pos[idx], nxt[idx]
                live = [live[r] for r in keep]
            attn = torch.cat([attn, attn.new_ones((len(live), 1))], dim=-1)
            last_pos = last_pos + 1
            out = self.model(input_ids=nxt[:, None], attention_mask=attn, position_ids=last_pos[:, None],
                             past_key_values=cache, use_cache=True)
            cache, logits = out.past_key_values, out.logits[:, -1, :]
        return [GenerationOutput(tokens[i], reasons[i], logprobs[i]) for i in range(b)]  # type: ignore[arg-type]
