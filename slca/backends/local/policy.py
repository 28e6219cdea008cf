"""Log-probs and entropies of response tokens under a causal LM, on batches from `slca.rollout.collate`."""

from __future__ import annotations

from typing import Any

import torch

from slca.backends.local.losses import token_logprobs_and_entropy
from slca.rollout.collate import response_logits

BATCH_KEYS = ("input_ids", "attention_mask", "position_ids", "responses")


def select_rows(batch: dict[str, Any], rows: torch.Tensor) -> dict[str, Any]:
    """The sub-batch of `rows` (tensors indexed, `response_start` kept)."""
    return {k: (v[rows] if isinstance(v, torch.Tensor) else v) for k, v in batch.items()}


def response_logprobs(
    model: Any, batch: dict[str, Any], *, temperature: float = 1.0, with_entropy: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-prob (and entropy) of each response token under softmax(logits / temperature): (B, R) float32.

    batch: `collate` output (prompts left-padded to P = response_start, responses right-padded to R).
    The temperature is the rollouts' own, so the PPO ratio compares the distribution that was
    sampled from (as verl does). Gradients flow when called outside `torch.no_grad()`.
    """
    logits = model(
        input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], position_ids=batch["position_ids"], use_cache=False
    ).logits
    logp, entropy = token_logprobs_and_entropy(response_logits(logits, batch, temperature), batch["responses"])
    return logp, (entropy if with_entropy else None)


@torch.no_grad()
def batched_response_logprobs(model: Any, batch: dict[str, Any], micro_batch: int, *, temperature: float = 1.0) -> torch.Tensor:
    """`response_logprobs` without gradients, `micro_batch` rows at a time: (B, R)."""
    n = batch["input_ids"].shape[0]
    parts = [
        response_logprobs(model, select_rows(batch, torch.arange(i, min(i + micro_batch, n))), temperature=temperature)[0] for i in range(0, n, micro_batch)
    ]
    return torch.cat(parts, dim=0)
