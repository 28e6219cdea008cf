"""A transformers rollout for verl 0.9.1 (rollout name `slca_hf`): what lets verl train on CPU.

verl's agent loop asks a rollout server for token ids with per-token log-probs; after each
update the actor workers push their weights to it. Three pieces, each verl's own extension point:
`HFRolloutServer` (one Ray actor per replica, generating with transformers), `HFReplica` (the
`RolloutReplica` that launches it) and `HFServerAdapter` (the `BaseRollout` inside each actor
worker that forwards weight updates). Sleep, wake-up and abort have nothing to free on CPU.
"""

from __future__ import annotations

import asyncio
import os
import random
from dataclasses import dataclass
from typing import Any, Generator

import ray
import torch
from verl.workers.rollout.base import BaseRollout
from verl.workers.rollout.replica import RolloutReplica, TokenOutput

from slca.backends.verl.compose import CPU_ROLLOUT as NAME
from slca.rollout.generators.hf import HFGenerator

_PREFIX = "slca_hf_"
# How long the server waits for the rest of a turn's requests before sampling a batch.
GATHER_SECONDS = 0.01


def _server_name(replica_rank: int) -> str:
    return f"{_PREFIX}server_{replica_rank}_0"


@dataclass(frozen=True)
class Sampling:
    """The sampling settings of one request that a batch must share (slca's `hf` generator takes one
    temperature, top-p and stop set per call)."""

    temperature: float
    top_p: float
    stops: frozenset[int]

    @classmethod
    def of(cls, params: dict[str, Any], eos: set[int]) -> Sampling:
        top_k = int(params.get("top_k", -1) or -1)
        penalty = float(params.get("repetition_penalty", 1.0) or 1.0)
        if top_k > 0 or penalty != 1.0:
            raise ValueError(f"the {NAME} rollout samples with temperature and top-p only (asked: top_k={top_k}, repetition_penalty={penalty})")
        stops = frozenset(eos | {int(t) for t in params.get("stop_token_ids") or []})
        return cls(float(params.get("temperature", 1.0)), float(params.get("top_p", 1.0)), stops)


@dataclass
class _Request:
    prompt_ids: list[int]
    budget: int
    sampling: Sampling
    reply: asyncio.Future


class HFRolloutServer:
    """Generates with a transformers model on CPU (a Ray actor). The agent loops send their requests
    together; those waiting when the model is free are sampled as one batch by slca's `hf` generator,
    since on CPU a decoding step of the tiny models costs little more for sixteen sequences than for one."""

    def __init__(self, config: Any, model_config: Any, replica_rank: int) -> None:
        from transformers import AutoModelForCausalLM

        self.config = config
        self.prompt_length = int(config.prompt_length)
        self.response_length = int(config.response_length)
        # A dataclass in the workers, a DictConfig (no local_path key) in the replica.
        path = getattr(model_config, "local_path", None) or model_config.path
        self.model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation="sdpa")
        self.model.eval()
        self.eos = set(_as_list(self.model.generation_config.eos_token_id))
        pad = self.model.config.pad_token_id
        self.generator = HFGenerator(self.model, pad_token_id=int(pad if pad is not None else min(self.eos, default=0)))
        self.seeds = random.Random(1000 + replica_rank)  # one seed per batch, drawn in order
        self.global_steps: int | None = None
        self.pending: list[_Request] = []
        self.draining: asyncio.Task | None = None

    async def generate(self, request_id: str, prompt_ids: list[int], sampling_params: dict[str, Any], **_media: Any) -> TokenOutput:
        params = dict(sampling_params)
        budget = params.get("max_tokens", params.get("max_new_tokens"))
        if budget is None:
            budget = min(self.response_length, self.prompt_length + self.response_length - len(prompt_ids))
        loop = asyncio.get_running_loop()
        request = _Request(list(prompt_ids), max(1, int(budget)), Sampling.of(params, self.eos), loop.create_future())
        self.pending.append(request)
        if self.draining is None or self.draining.done():
            self.draining = loop.create_task(self._drain())
        return await request.reply

    async def _drain(self) -> None:
        while self.pending:
            # The agent loops' requests of one turn arrive a few milliseconds apart: let them join.
            await asyncio.sleep(GATHER_SECONDS)
            batch, self.pending = self.pending, []
            groups: dict[Sampling, list[_Request]] = {}
            for request in batch:
                groups.setdefault(request.sampling, []).append(request)
            for sampling, requests in groups.items():
                try:
                    outputs = self.generator.generate(
                        [r.prompt_ids for r in requests],
                        max_new_tokens=[r.budget for r in requests],
                        temperature=sampling.temperature,
                        top_p=sampling.top_p,
                        stop_token_ids=set(sampling.stops),
                        seed=self.seeds.randrange(2**31),
                    )
                except Exception as exc:  # noqa: BLE001 - each waiting agent loop gets the error
                    for r in requests:
                        r.reply.set_exception(exc)
                    continue
                for r, out in zip(requests, outputs):
                    reply = TokenOutput(token_ids=out.token_ids, log_probs=out.logprobs, stop_reason="completed", extra_fields={"global_steps": self.global_steps})
                    r.reply.set_result(reply)

    async def update_weights(self, weights: dict[str, torch.Tensor], global_steps: int | None = None) -> int:
        """Load the actor's weights; every name must be one of the model's (a mismatch is a broken sync).
        A coroutine, so that it waits for the batch in progress instead of loading weights under it."""
        own = self.model.state_dict()
        unknown = sorted(set(weights) - set(own))
        if unknown:
            raise KeyError(f"rollout model has no parameters named {unknown[:3]}")
        with torch.no_grad():
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
            .options(name=_server_name(self.replica_rank), num_cpus=0)
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
