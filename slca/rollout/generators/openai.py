"""`openai` generator: an OpenAI-compatible *completions* endpoint (text in, text out), stdlib only.

Prompts are decoded to text with the model's tokenizer and completions re-encoded, so token ids
are the tokenizer's reading of the served text. Stop ids become stop strings; when the server
leaves the matched stop string out of the text it is put back (vLLM's `stop_reason` names it; a
stop with no named reason is the model's EOS), so outputs end with their stop token like vLLM's.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from slca.rollout.generators.base import per_prompt_caps, register_generator
from slca.rollout.types import GenerationOutput

_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class EndpointError(RuntimeError):
    """The endpoint failed after every retry (or answered with an unusable body)."""


@register_generator("openai")
class OpenAICompletionsGenerator:
    """Completions from `base_url` (e.g. http://host:8000/v1) for `model`.

    api_key_env: name of the environment variable holding the key (none sent when unset).
    vllm_extras: also send vLLM's sampling extensions (skip_special_tokens=False,
    include_stop_str_in_output=True); turn off for strict OpenAI servers.
    Retries: timeouts, connection errors and HTTP 408/409/429/5xx, sleeping retry_backoff_s·k.
    """

    def __init__(self, *, base_url: str, model: str, tokenizer: Any, api_key_env: str | None = None,
                 timeout_s: float = 600.0, max_retries: int = 2, retry_backoff_s: float = 1.0,
                 max_concurrency: int = 16, vllm_extras: bool = True):
        if max_retries < 0 or max_concurrency < 1 or timeout_s <= 0:
            raise ValueError("need max_retries >= 0, max_concurrency >= 1 and timeout_s > 0")
        self.url = base_url.rstrip("/") + "/completions"
        self.model = model
        self.tokenizer = tokenizer
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.retry_backoff_s = retry_backoff_s
        self.max_concurrency = max_concurrency
        self.vllm_extras = vllm_extras

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        data = json.dumps(body).encode("utf-8")
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.retry_backoff_s * attempt)
            req = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                    payload = resp.read()
            except urllib.error.HTTPError as exc:
                last = exc
                if exc.code in _RETRY_STATUS:
                    continue
                raise EndpointError(f"{self.url}: HTTP {exc.code}: {exc.read()[:500]!r}") from exc
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                last = exc
                continue
            try:
                return json.loads(payload)
            except json.JSONDecodeError as exc:
                raise EndpointError(f"{self.url}: response is not JSON: {payload[:200]!r}") from exc
        raise EndpointError(f"{self.url}: failed after {self.max_retries + 1} attempts: {last}") from last

    def _one(self, prompt: str, cap: int, temperature: float, top_p: float, stops: dict[str, int],
             seed: int) -> GenerationOutput:
        if cap == 0:
            return GenerationOutput([], "length")
        body: dict[str, Any] = {"model": self.model, "prompt": prompt, "max_tokens": cap, "temperature": temperature,
                                "top_p": top_p, "seed": seed, "n": 1}
        if stops:
            body["stop"] = list(stops)
        if self.vllm_extras:
            body.update(skip_special_tokens=False, include_stop_str_in_output=True)
        reply = self._post(body)
        try:
            choice = reply["choices"][0]
            text = choice["text"]
        except (KeyError, IndexError, TypeError) as exc:
            raise EndpointError(f"{self.url}: no choices[0].text in {str(reply)[:200]}") from exc
        ids = [int(i) for i in self.tokenizer.encode(text, add_special_tokens=False)]
        reason = "stop" if choice.get("finish_reason") == "stop" else "length"
        if reason == "stop" and not (ids and ids[-1] in stops.values()):
            ids += self._stop_id(choice.get("stop_reason"), stops)
        if len(ids) > cap:  # re-encoding may differ from the server's count; the cap is binding
            ids, reason = ids[:cap], "length"
        return GenerationOutput(ids, reason)  # type: ignore[arg-type]

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
    ) -> list[GenerationOutput]:
        caps = per_prompt_caps(max_new_tokens, len(prompt_token_ids))
        prompts = self.tokenizer.batch_decode([list(p) for p in prompt_token_ids], skip_special_tokens=False)
        stops = {self.tokenizer.decode([s], skip_special_tokens=False): int(s) for s in sorted(stop_token_ids)}
        jobs = list(zip(prompts, caps, range(len(caps))))

        def run(job: tuple[str, int, int]) -> GenerationOutput:
            prompt, cap, i = job
            return self._one(prompt, cap, temperature, top_p, stops, int(seed) + i)

        if len(jobs) <= 1 or self.max_concurrency == 1:
            return [run(j) for j in jobs]
        with ThreadPoolExecutor(min(self.max_concurrency, len(jobs))) as pool:
            return list(pool.map(run, jobs))
