"""A transformers rollout for verl 0.9.1 (rollout name `slca_hf`): what lets verl train on CPU.

verl's agent loop asks a rollout server for token ids with per-token log-probs; after each
update the actor workers push their weights to it. Three pieces, each verl's own extension point:
`HFRolloutServer` (one Ray actor per replica, generating with transformers), `HFReplica` (the
`RolloutReplica` that launches it) and `HFServerAdapter` (the `BaseRollout` inside each actor
worker that forwards weight updates). Sleep, wake-up and abort have nothing to free on CPU.
"""

from __future__ import annotations

import os
from typing import Any, Generator

import ray
import torch
from verl.workers.rollout.base import BaseRollout
from verl.workers.rollout.replica import RolloutReplica, TokenOutput

from slca.backends.verl.compose import CPU_ROLLOUT as NAME

_PREFIX = "slca_hf_"


def _server_name(replica_rank: int) -> str:
    return f"{_PREFIX}server_{replica_rank}_0"


def sample_next(logits: torch.Tensor, temperature: float, top_p: float, top_k: int, generator: torch.Generator) -> tuple[int, float]:
    """One token from the last position's logits and its log-prob under the tempered distribution
    (what verl's actor recomputes: log_softmax(logits / temperature)); temperature 0 is greedy."""
    if temperature <= 0:
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        token = int(torch.argmax(logprobs))
        return token, float(logprobs[token])
    logprobs = torch.log_softmax(logits.float() / temperature, dim=-1)
    candidates = logprobs.clone()
    if top_k > 0:
        kth = torch.topk(candidates, min(top_k, candidates.numel())).values[-1]
        candidates[candidates < kth] = float("-inf")
    if top_p < 1.0:
        ordered, order = torch.sort(candidates, descending=True)
        cumulative = torch.cumsum(torch.softmax(ordered, dim=-1), dim=-1)
        # Keep the smallest prefix whose mass reaches top_p (the first token always stays).
        drop = cumulative - torch.softmax(ordered, dim=-1) >= top_p
        candidates[order[drop]] = float("-inf")
    token = int(torch.multinomial(torch.softmax(candidates, dim=-1), 1, generator=generator))
    return token, float(logprobs[token])


class HFRolloutServer:
    """Generates one request at a time with a transformers model on CPU (a Ray actor)."""

    def __init__(self, config: Any, model_config: Any, replica_rank: int) -> None:
        from transformers import AutoModelForCausalLM

        self.config = config
        self.prompt_length = int(config.prompt_length)
        self.response_length = int(config.response_length)
        # A dataclass in the workers, a DictConfig (no local_path key) in the replica.
        path = getattr(model_config, "local_path", None) or model_config.path
        self.model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32, attn_implementation="sdpa")
        self.model.eval()
        self.eos = set(_as_list(self.model.generation_config.eos_token_id))
        self.generator = torch.Generator().manual_seed(1000 + replica_rank)
        self.global_steps: int | None = None

    @torch.no_grad()
    def generate(self, request_id: str, prompt_ids: list[int], sampling_params: dict[str, Any], **_media: Any) -> TokenOutput:
        params = dict(sampling_params)
        budget = params.get("max_tokens", params.get("max_new_tokens"))
        if budget is None:
            budget = min(self.response_length, self.prompt_length + self.response_length - len(prompt_ids))
        budget = max(1, int(budget))
        stops = self.eos | set(params.get("stop_token_ids") or [])
        temperature = float(params.get("temperature", 1.0))
        top_p = float(params.get("top_p", 1.0))
        top_k = int(params.get("top_k", -1) or -1)
        ids = torch.tensor([prompt_ids], dtype=torch.long)
        out = self.model(input_ids=ids, use_cache=True)
        tokens: list[int] = []
        logprobs: list[float] = []
        for _ in range(budget):
            token, logprob = sample_next(out.logits[0, -1], temperature, top_p, top_k, self.generator)
            tokens.append(token)
            logprobs.append(logprob)
            if token in stops:
                break
            out = self.model(input_ids=torch.tensor([[token]]), past_key_values=out.past_key_values, use_cache=True)
        return TokenOutput(token_ids=tokens, log_probs=logprobs, stop_reason="completed", extra_fields={"global_steps": self.global_steps})

    @torch.no_grad()
    def update_weights(self, weights: dict[str, torch.Tensor], global_steps: int | None = None) -> int:
        """Load the actor's weights; every name must be one of the model's (a mismatch is a broken sync)."""
        own = self.model.state_dict()
        unknown = sorted(set(weights) - set(own))
        if unknown:
            raise KeyError(f"rollout model has no parameters named {unknown[:3]}")
        for name, tensor in weights.items():
            own[name].copy_(tensor.to(own[name].dtype))
        self.global_steps = global_steps
        return len(weights)

    def set_global_steps(self, global_steps: int) -> None:
        self.global_steps = global_steps

    # Nothing to free, pause or resume on CPU.
    def wake_up(self, tags: list[str] | None = None) -> None:
        return None

    def sleep(self) -> None:
        return None

    def clear_kv_cache(self) -> None:
        return None

    def release_kv_cache(self) -> None:
        return None

    def resume_kv_cache(self) -> None:
        return None

    def abort_all_requests(self, reject_request: bool = False) -> dict[str, Any]:
        return {"aborted_count": 0, "request_ids": []}

    def resume_generation(self) -> None:
        return None

    def start_profile(self, **_kwargs: Any) -> None:
        return None

    def stop_profile(self) -> None:
        return None


def _as_list(value: Any) -> list[int]:
    if value is None:
        return []
    return [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]


class HFReplica(RolloutReplica):
    """One `HFRolloutServer` per replica, named so the actor workers' adapters can find it."""

    def rollout_worker_use_gpu(self) -> bool:
        return False

    async def launch_servers(self) -> None:
        server = (
            ray.remote(HFRolloutServer)
            .options(name=_server_name(self.replica_rank), num_cpus=0, max_concurrency=1)
            .remote(config=self.config, model_config=self.model_config, replica_rank=self.replica_rank)
        )
        self.servers = [server]
        self._server_handle = server
        self._server_address = _server_name(self.replica_rank)


class HFServerAdapter(BaseRollout):
    """Inside each actor worker: forwards the actor's weights to its replica's server."""

    def __init__(self, config: Any, model_config: Any, device_mesh: Any, replica_rank: int = -1) -> None:
        super().__init__(config, model_config, device_mesh)
        rank = int(os.environ["RANK"])
        world = self.config.tensor_model_parallel_size * self.config.data_parallel_size * self.config.pipeline_model_parallel_size
        self.replica_rank = rank // world if replica_rank == -1 else replica_rank
        # The first rank of a replica talks to its server; the others only take part in the gather.
        self.has_server = rank % world == 0
        self.server: Any = None

    async def resume(self, tags: list[str]) -> None:
        return None

    async def release(self) -> None:
        return None

    @torch.no_grad()
    async def update_weights(self, weights: Generator[tuple[str, torch.Tensor], None, None], wire_format: str = "named_tensors", global_steps: int | None = None, **_kwargs: Any) -> None:
        if wire_format != "named_tensors":
            raise ValueError(f"the {NAME} rollout takes full tensors (wire_format='named_tensors'), not {wire_format!r}")
        # Every rank consumes the generator: gathering sharded parameters is collective.
        full = {name: tensor.detach().to("cpu", copy=True) for name, tensor in weights}
        if not self.has_server:
            return None
        if self.server is None:
            self.server = ray.get_actor(_server_name(self.replica_rank))
        await self.server.update_weights.remote(full, global_steps)
        return None
