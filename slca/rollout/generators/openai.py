"""`openai` generator: an OpenAI-compatible *completions* endpoint (text in, text out), stdlib only.

Prompts are decoded to text with the model's tokenizer and completions re-encoded, so token ids
are the tokenizer's reading of the served text. Stop ids become stop strings; when the server
leaves the matched stop string out of the text it is put back (vLLM's `stop_reason` names it; a
stop with no named reason is the model's EOS), so outputs end with their stop token like vLLM's.
"""

from __future__ import annotations

import hashlib
import threading
from array import array
from collections.abc import Sequence
from typing import Any

from slca.config.http import HttpEndpoint
from slca.http import EndpointError, HttpClient
from slca.rollout.chat import decode_texts, encode_texts
from slca.rollout.generators.base import per_prompt_caps, register_generator
from slca.rollout.types import GenerationOutput

__all__ = ["EndpointError", "OpenAICompletionsGenerator"]


def _choice_text(reply: Any) -> tuple[str, dict[str, Any]]:
    choice = reply["choices"][0]
    if not isinstance(choice["text"], str):
        raise TypeError("choices[0].text is not a string")
    return choice["text"], choice


@register_generator("openai")
class OpenAICompletionsGenerator:
    """Completions from `base_url` (e.g. http://host:8000/v1) for `model`, through slca's one HTTP client.

    endpoint: the shared endpoint settings (slca.config.http.HttpEndpoint or a subclass: base_url,
    api_key_env, timeout_s, max_retries, retry_backoff_s, max_concurrency, cache_dir).
    vllm_extras: also send vLLM's sampling extensions (skip_special_tokens=False,
    include_stop_str_in_output=True); turn off for strict OpenAI servers.

    Prompts come as ids and, from the rollout loop's first round, with the texts they were tokenised
    from, which are sent as they are. Texts decoded from ids (later turns) are kept by a digest of the
    ids (up to MEMO_CHARS characters, then dropped at once): a grid sends each prompt once per seed.
    """

    MEMO_CHARS = 64 * 2**20
    # Each prompt is its own request, seeded by its position in the round: a round may be sent in parts.
    independent_prompts = True

    def __init__(self, *, endpoint: HttpEndpoint, model: str, tokenizer: Any, vllm_extras: bool = True):
        self.client = HttpClient(endpoint, "/completions")
        self.url = self.client.url
        self.model = model
        self.tokenizer = tokenizer
        self.vllm_extras = vllm_extras
        self._texts: dict[bytes, str] = {}
        self._memo_chars = 0
        self._memo_lock = threading.Lock()  # one generator may be called from several threads at once

    def _reply(self, prompt: str, cap: int, temperature: float, top_p: float, stops: dict[str, int],
               seed: int) -> tuple[str, dict[str, Any]] | None:
        """(text, choice) of one completion; None when the cap leaves nothing to generate."""
        if cap == 0:
            return None
        body: dict[str, Any] = {"model": self.model, "prompt": prompt, "max_tokens": cap, "temperature": temperature,
                                "top_p": top_p, "seed": seed, "n": 1}
        if stops:
            body["stop"] = list(stops)
        if self.vllm_extras:
            body.update(skip_special_tokens=False, include_stop_str_in_output=True)
        return self.client.post(body, _choice_text)

    def _output(self, ids: list[int], choice: dict[str, Any], cap: int, stops: dict[str, int]) -> GenerationOutput:
        reason = "stop" if choice.get("finish_reason") == "stop" else "length"
        if reason == "stop" and not (ids and ids[-1] in stops.values()):
            ids += self._stop_id(choice.get("stop_reason"), stops)
        if len(ids) > cap:  # re-encoding may differ from the server's count; the cap is binding
            ids, reason = ids[:cap], "length"
        return GenerationOutput(ids, reason)  # type: ignore[arg-type]

    def _prompt_texts(self, ids: list[list[int]]) -> list[str]:
        keys = [hashlib.blake2b(array("q", p).tobytes(), digest_size=16).digest() for p in ids]
        with self._memo_lock:
            if self._memo_chars > self.MEMO_CHARS:
                self._texts, self._memo_chars = {}, 0
            todo = {k: p for k, p in zip(keys, ids) if k not in self._texts}
            for k, text in zip(todo, decode_texts(self.tokenizer, list(todo.values()))):
                self._texts[k] = text
                self._memo_chars += len(text)
            return [self._texts[k] for k in keys]

    def _stop_id(self, stop_reason: Any, stops: dict[str, int]) -> list[int]:
        if isinstance(stop_reason, str) and stop_reason in stops:
            return [stops[stop_reason]]
        if isinstance(stop_reason, int) and stop_reason in stops.values():
            return [stop_reason]
        eos = self.tokenizer.eos_token_id
        return [int(eos)] if eos is not None and eos in stops.values() else []

    def generate(
        self,
        prompt_token_ids: Sequence[Sequence[int]],
        *,
        max_new_tokens: Sequence[int] | int,
        temperature: float = 1.0,
        top_p: float = 1.0,
        stop_token_ids: set[int] = frozenset(),
        seed: int = 0,
        first_index: int = 0,
        prompt_texts: Sequence[str] | None = None,
    ) -> list[GenerationOutput]:
        """first_index: the position of the first prompt in its round (the loop sends a round in parts), so
        prompt i is seeded `seed + first_index + i` however the round was split. prompt_texts: the texts
        the prompts' ids were tokenised from, sent as they are instead of decoding the ids."""
        caps = per_prompt_caps(max_new_tokens, len(prompt_token_ids))
        if prompt_texts is None:
            prompts = self._prompt_texts([list(p) for p in prompt_token_ids])
        elif len(prompt_texts) == len(prompt_token_ids):
            prompts = list(prompt_texts)
        else:
            raise ValueError(f"{len(prompt_texts)} prompt texts for {len(prompt_token_ids)} prompts")
        stops = {self.tokenizer.decode([s], skip_special_tokens=False): int(s) for s in sorted(stop_token_ids)}
        jobs = list(zip(prompts, caps, range(len(caps))))

        def run(job: tuple[str, int, int]) -> tuple[str, dict[str, Any]] | None:
            prompt, cap, i = job
            return self._reply(prompt, cap, temperature, top_p, stops, int(seed) + first_index + i)

        replies = self.client.map(run, jobs)
        # One batch after all replies: encoding each in its request thread contends for the GIL with the others.
        answered = [(i, reply) for i, reply in enumerate(replies) if reply is not None]
        encoded = encode_texts(self.tokenizer, [text for _, (text, _) in answered])
        outputs = [GenerationOutput([], "length") for _ in replies]
        for (i, (_, choice)), ids in zip(answered, encoded):
            outputs[i] = self._output(ids, choice, caps[i], stops)
        return outputs
