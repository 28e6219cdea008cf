"""How the eval stage samples a saved policy: one builder per generator of the rollout registry.

`eval.generator` names the generator; its builder turns (model directory, tokenizer, eval config,
device) into a constructed generator, since each generator class takes different arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slca.config.groups.eval import EvalConfig
from slca.registry import Registry
from slca.rollout.generators import get_generator

Builder = Callable[[str, Any, EvalConfig, Any], Any]
BUILDERS: Registry[Builder] = Registry("eval generator builder")


@BUILDERS.register("hf")
def _hf(model_dir: str, tokenizer: Any, cfg: EvalConfig, device: Any) -> Any:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True, use_safetensors=True).to(device).eval()
    return get_generator("hf")(model, pad_token_id=tokenizer.pad_token_id)


@BUILDERS.register("vllm")
def _vllm(model_dir: str, tokenizer: Any, cfg: EvalConfig, device: Any) -> Any:
    return get_generator("vllm")(model=model_dir)  # the engine is built on the first generate call


@BUILDERS.register("openai")
def _openai(model_dir: str, tokenizer: Any, cfg: EvalConfig, device: Any) -> Any:
    return get_generator("openai")(endpoint=cfg.endpoint, model=cfg.endpoint.model or model_dir, tokenizer=tokenizer)


def build_generator(cfg: EvalConfig, model_dir: str, tokenizer: Any, device: Any) -> Any:
    """The generator `cfg.generator` sampling the policy saved in `model_dir`."""
    return BUILDERS.get(cfg.generator)(model_dir, tokenizer, cfg, device)
