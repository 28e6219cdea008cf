"""Trajectories → padded training tensors (verl layout: left-padded prompts, right-padded responses)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from slca.rollout.types import Trajectory


def collate(trajectories: Sequence[Trajectory], pad_id: int, *, prompt_length: int | None = None,
            response_length: int | None = None) -> dict[str, Any]:
    """Pad a batch of trajectories into tensors.

    Prompts are left-padded to P (the longest prompt, or `prompt_length`), responses right-padded
    to R (the longest response, or `response_length`); the sequence is prompt ‖ response, L = P + R.
    Returns:
      input_ids [B, L] long, attention_mask [B, L] long (1 on real tokens),
      position_ids [B, L] long (0 at each row's first real token; padding gets 0 / continues),
      prompts [B, P], responses [B, R] long,
      response_mask [B, R] float (1 = policy token, docs/method.md#segments-from-mask-topology), response_attention_mask [B, R] long
      (1 = real response token, environment tokens included),
      token_kinds [B, R] long (KIND_* of slca.rollout.types, -1 on padding),
      response_start: P (int). Logits at positions P-1 … P+R-2 predict the response tokens; see
      `response_logprobs`.
    """
    import torch

    b = len(trajectories)
    if b == 0:
        raise ValueError("collate needs at least one trajectory")
    untokenised = [i for i, t in enumerate(trajectories) if t.prompt_ids is None]
    if untokenised:
        raise ValueError(f"trajectory {untokenised[0]} has no prompt ids (rolled out with keep_prompt_ids=False): nothing to collate")
    p = max(len(t.prompt_ids) for t in trajectories)
    r = max(len(t.response_ids) for t in trajectories)
    if prompt_length is not None:
        if prompt_length < p:
            raise ValueError(f"prompt_length {prompt_length} < longest prompt {p}")
        p = prompt_length
    if response_length is not None:
        if response_length < r:
            raise ValueError(f"response_length {response_length} < longest response {r}")
        r = response_length
    r = max(r, 1)  # keep a response axis even when every response is empty
    prompts = torch.full((b, p), pad_id, dtype=torch.long)
    responses = torch.full((b, r), pad_id, dtype=torch.long)
    prompt_attn = torch.zeros((b, p), dtype=torch.long)
    resp_attn = torch.zeros((b, r), dtype=torch.long)
    resp_mask = torch.zeros((b, r), dtype=torch.float32)
    kinds = torch.full((b, r), -1, dtype=torch.long)
    for i, t in enumerate(trajectories):
        n_p, n_r = len(t.prompt_ids), len(t.response_ids)
        if len(t.response_mask) != n_r:
            raise ValueError(f"trajectory {i}: response_mask has {len(t.response_mask)} entries for {n_r} tokens")
        if n_p:
            prompts[i, p - n_p :] = torch.tensor(t.prompt_ids, dtype=torch.long)
            prompt_attn[i, p - n_p :] = 1
        if n_r:
            responses[i, :n_r] = torch.tensor(t.response_ids, dtype=torch.long)
            resp_attn[i, :n_r] = 1
            resp_mask[i, :n_r] = torch.tensor(t.response_mask, dtype=torch.float32)
            if len(t.token_kinds) == n_r:
                kinds[i, :n_r] = torch.tensor(t.token_kinds, dtype=torch.long)
    attention_mask = torch.cat([prompt_attn, resp_attn], dim=1)
    position_ids = (attention_mask.cumsum(dim=1) - 1).clamp(min=0)
    return {
        "input_ids": torch.cat([prompts, responses], dim=1),
        "attention_mask": attention_mask,
        "position_ids": position_ids,
        "prompts": prompts,
        "responses": responses,
        "response_mask": resp_mask,
        "response_attention_mask": resp_attn,
        "token_kinds": kinds,
        "response_start": p,
    }


def response_logits(logits: Any, batch: dict[str, Any], temperature: float = 1.0) -> Any:
    """The [B, R, V] float32 logits that predict the response tokens, divided by the sampling temperature.

    logits: [B, L, V] from a forward pass over batch["input_ids"] (position t predicts token t + 1).
    """
    p = batch["response_start"]
    if p < 1:
        raise ValueError("response log-probs need at least one prompt token before the response")
    r = batch["responses"].shape[1]
    pred = logits[:, p - 1 : p - 1 + r, :].float()
    return pred / temperature if temperature != 1.0 else pred


def response_logprobs(logits: Any, batch: dict[str, Any], temperature: float = 1.0) -> Any:
    """Log-probabilities of the response tokens under `logits`.

    logits: [B, L, V] from a forward pass over batch["input_ids"]; returns [B, R] float
    (log softmax(logits / temperature) at each response token; padding positions are garbage,
    mask them with response_attention_mask or response_mask).
    """
    import torch

    logp = torch.log_softmax(response_logits(logits, batch, temperature), dim=-1)
    return logp.gather(-1, batch["responses"][..., None]).squeeze(-1)
