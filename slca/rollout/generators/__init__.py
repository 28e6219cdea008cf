"""Generator registry: `hf` (transformers), `vllm` (offline vLLM), `openai` (completions endpoint)."""

from __future__ import annotations

from slca.rollout.generators import hf as _hf  # noqa: F401  (registers "hf")
from slca.rollout.generators import openai as _openai  # noqa: F401  (registers "openai")
from slca.rollout.generators import vllm as _vllm  # noqa: F401  (registers "vllm")
from slca.rollout.generators.base import GENERATORS, Generator, get_generator, register_generator
from slca.rollout.generators.hf import HFGenerator, sample_next
from slca.rollout.generators.openai import EndpointError, OpenAICompletionsGenerator
from slca.rollout.generators.vllm import VLLMGenerator

__all__ = ["GENERATORS", "EndpointError", "Generator", "HFGenerator", "OpenAICompletionsGenerator", "VLLMGenerator",
           "get_generator", "register_generator", "sample_next"]
