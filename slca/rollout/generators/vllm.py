"""`vllm` generator: the Generator interface over vLLM's offline `LLM.generate` (GPU machines only).

vllm is imported on first use, so this module is cheap to import where vllm is absent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from slca.rollout.generators.base import per_prompt_caps, register_generator
from slca.rollout.types import GenerationOutput


@register_generator("vllm")
class VLLMGenerator:
    """Sampling with a vllm.LLM: per-request seeds (seed + prompt index), stop token ids kept in the output.

    Pass a built `llm`, or `model` (path or hub id) plus vllm.LLM keyword arguments to build one lazily.
    logprobs: also return the sampled tokens' log-probabilities.
    """

    def __init__(self, llm: Any = None, *, model: str | None = None, logprobs: bool = False, **llm_kwargs: Any):
        if llm is None and model is None:
            raise ValueError("VLLMGenerator needs an llm or a model to load")
        self._llm = llm
        self._model = model
        self._llm_kwargs = llm_kwargs
        self.logprobs = logprobs

    @property
    def llm(self) -> Any:
        if self._llm is None:
            from vllm import LLM

            self._llm = LLM(model=self._model, **self._llm_kwargs)
        return self._llm

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
        from vllm import SamplingParams

        caps = per_prompt_caps(max_new_tokens, len(prompt_token_ids))
        # vLLM rejects max_tokens=0; those prompts are answered here.
        todo = [i for i, c in enumerate(caps) if c > 0]
        outputs: list[GenerationOutput] = [GenerationOutput([], "length", []) for _ in caps]
        if not todo:
            return outputs
        params = [
            SamplingParams(
                n=1,
                temperature=temperature,
                top_p=top_p,
                max_tokens=caps[i],
                stop_token_ids=sorted(int(s) for s in stop_token_ids),
                include_stop_str_in_output=True,
                skip_special_tokens=False,
                seed=int(seed) + i,
                logprobs=0 if self.logprobs else None,
            )
            for i in todo
        ]
        prompts = [{"prompt_token_ids": [int(t) for t in prompt_token_ids[i]]} for i in todo]
        results = self.llm.generate(prompts, sampling_params=params, use_tqdm=False)
        for i, res in zip(todo, results):
            comp = res.outputs[0]
            ids = [int(t) for t in comp.token_ids]
            lps = None
            if self.logprobs and comp.logprobs is not None:
                lps = [float(step[tok].logprob) for tok, step in zip(ids, comp.logprobs)]
            # vLLM's "abort" (and anything else not a stop) is reported as running out of budget
            reason = "stop" if comp.finish_reason == "stop" else "length"
            outputs[i] = GenerationOutput(ids, reason, lps)  # type: ignore[arg-type]
        return outputs
