"""Wire the shared rollout loop to the local trainer: generator, simulator and prompt protocol."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable

from slca.config.spec import Spec
from slca.rollout import RolloutBatch, RolloutConfig, get_generator, run_rollouts
from slca.rollout.protocol import protocol_prompt_fn
from slca.sim import build_simulator


def make_rollout_fn(spec: Spec, model: Any, tokenizer: Any, device: Any) -> Callable[..., RolloutBatch]:
    """`fn(rows, *, n, seed) -> RolloutBatch` sampling from `model` with the spec's RL settings."""
    generator = get_generator("hf")(model, pad_token_id=tokenizer.pad_token_id)
    simulator = build_simulator(spec.simulator)
    cfg = RolloutConfig.from_rl(spec.train.rl)
    prompt_fn = protocol_prompt_fn(system_prompt=spec.train.rl.system_prompt)

    def rollout(rows: list[Mapping[str, Any]], *, n: int, seed: int) -> RolloutBatch:
        return run_rollouts(
            rows, n=n, generator=generator, simulator=simulator, tokenizer=tokenizer, cfg=cfg, seed=seed, prompt_fn=prompt_fn
        )

    return rollout
