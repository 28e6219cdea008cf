"""`sgls` simulator (docs/method.md#tool-simulators): an LLM behind an OpenAI-compatible endpoint plays the API server.

Differences from the reference, on purpose: replies are cached on disk by sha256(model, prompt)
(so identical calls see identical observations, docs/method.md#reference-quirks Q17), an unparseable reply body counts as
a failed attempt and is retried, a `<think>` block in the reply is dropped before extraction, and
identical calls within one turn are sent once.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from slca.fileio import atomic_write_text
from slca.sim.base import Recorded, Simulator, Tools, register_simulator
from slca.sim.checks import precheck
from slca.sim.types import Call, Observation, ObservationKind, ToolSpec, as_call, canonical_json

log = logging.getLogger(__name__)

_PREAMBLE = """\
You are an API SERVER, not an assistant. A client has sent you one tool call; reply with exactly \
the response the real API would send back.

Rules:
- Output only the response, as JSON wrapped in <tool_response></tool_response>.
- Never output <tool_call> tags, markdown, explanations or any other prose.
- Keep the response realistic and consistent with the tool definition and the request parameters.

Examples (request -> response):
<tool_call>[{"name": "calculator", "parameters": {"expression": "12*7"}, "depend_on": []}]</tool_call> -> \
<tool_response>{"result": 84}</tool_response>
<tool_call>[{"name": "get_weather", "parameters": {"city": "Oslo"}, "depend_on": []}]</tool_call> -> \
<tool_response>{"city": "Oslo", "temperature_c": 4, "condition": "light rain"}</tool_response>
<tool_call>[{"name": "web_search", "parameters": {"query": "tallest tree"}, "depend_on": []}]</tool_call> -> \
<tool_response>{"results": [{"title": "Hyperion (tree)", "snippet": "A coast redwood about 116 m tall."}]}\
</tool_response>
"""

_RETRYABLE = (urllib.error.URLError, http.client.HTTPException, OSError, ValueError, KeyError, IndexError,
              TypeError)


def build_prompt(schema: Mapping[str, Any], name: str, arguments: Mapping[str, Any]) -> str:
    """The single user message asking the model to answer `name(arguments)` as the API would."""
    request = [{"name": name, "parameters": dict(arguments), "depend_on": []}]
    return (
        f"{_PREAMBLE}\n"
        f"Tool Definition:\n{json.dumps(schema, indent=2, ensure_ascii=False)}\n\n"
        f"Incoming Request:\n<tool_call>\n{json.dumps(request, ensure_ascii=False)}\n</tool_call>\n\n"
        "Answer with the API response in <tool_response></tool_response> format and nothing else."
    )


def _strip_thinking(text: str) -> str:
    text = re.sub(r"<think>.*?</think>", "", text, flags=re.S)
    return text.rsplit("</think>", 1)[-1]  # an opening tag eaten by the chat template


def _extract_once(text: str) -> str:
    for tag in ("tool_response", "tool_call"):
        pairs = re.findall(rf"<{tag}>(.*?)</{tag}>", text, flags=re.S)
        if pairs:
            return pairs[-1].strip()
    cut = max(((text.rfind(f"<{t}>"), len(t) + 2) for t in ("tool_response", "tool_call")), key=lambda p: p[0])
    if cut[0] >= 0:
        return text[cut[0] + cut[1]:].strip()
    return text.strip()


def extract_response(text: str) -> str:
    """docs/method.md#tool-simulators: unwrap the last complete tag pair (or the tail after an unmatched opening tag),
    repeated until the text stops changing."""
    text = _strip_thinking(text)
    while True:
        new = _extract_once(text)
        if new == text:
            return new
        text = new


@register_simulator("sgls")
class SglsSimulator(Simulator):
    """Unknown tools and missing required parameters are answered locally (docs/method.md#tool-simulators step 4); every
    other call is a chat-completions request. Failure after retries → an error observation."""

    def __init__(self, cfg: Any, **kwargs: Any):
        super().__init__(cfg, **kwargs)
        self._url = cfg.base_url.rstrip("/") + "/chat/completions"
        # No proxies from the environment: behaviour comes from config only.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    # --- cache -------------------------------------------------------------------------------
    def cache_key(self, prompt: str) -> str:
        return hashlib.sha256(canonical_json([self.cfg.model, prompt]).encode("utf-8")).hexdigest()

    def _cache_path(self, key: str) -> Path | None:
        return None if self.cfg.cache_dir is None else Path(self.cfg.cache_dir) / key[:2] / f"{key}.json"

    def _cache_get(self, key: str) -> str | None:
        path = self._cache_path(key)
        if path is None:
            return None
        try:
            content = json.loads(path.read_text(encoding="utf-8"))["content"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return content if isinstance(content, str) else None

    def _cache_put(self, key: str, content: str) -> None:
        path = self._cache_path(key)
        if path is None:
            return
        try:
            payload = json.dumps({"model": self.cfg.model, "content": content}, ensure_ascii=False)
            atomic_write_text(path, payload, fsync=False)  # a lost cache entry only costs a request
        except OSError as exc:  # a cache that cannot be written only costs a later request
            log.warning("sgls cache write failed: %s", exc)

    # --- transport ---------------------------------------------------------------------------
    def _post(self, prompt: str) -> str:
        body = {
            "model": self.cfg.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": self.cfg.temperature,
            "max_tokens": self.cfg.max_tokens,
        }
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.cfg.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self._url, data=json.dumps(body).encode("utf-8"), headers=headers,
                                         method="POST")
        with self._opener.open(request, timeout=self.cfg.timeout_s) as resp:
            payload = json.loads(resp.read().decode("utf-8"))
        content = payload["choices"][0]["message"]["content"]
        if not isinstance(content, str):
            raise TypeError(f"reply content is {type(content).__name__}, not a string")
        return content

    def complete(self, prompt: str) -> str:
        """Raw reply text for `prompt` (cache first); raises the last error after the retries."""
        key = self.cache_key(prompt)
        cached = self._cache_get(key)
        if cached is not None:
            return cached
        attempts = self.cfg.max_retries + 1
        for attempt in range(attempts):
            try:
                content = self._post(prompt)
            except _RETRYABLE as exc:
                log.warning("sgls request failed (attempt %d/%d): %s", attempt + 1, attempts, exc)
                if attempt + 1 == attempts:
                    raise
                time.sleep(self.cfg.retry_backoff_s * (attempt + 1))
            else:
                self._cache_put(key, content)
                return content
        raise AssertionError("unreachable")

    # --- simulator ---------------------------------------------------------------------------
    def answer(self, call: Call, tools: Mapping[str, ToolSpec], recorded: Mapping[tuple[str, str], str]
               ) -> tuple[str, ObservationKind]:
        error = precheck(call, tools, check_types=False)
        if error is not None:
            return error, "error"
        prompt = build_prompt(tools[call.name].raw, call.name, call.arguments)
        try:
            reply = self.complete(prompt)
        except Exception as exc:  # noqa: BLE001 (an external service: any failure becomes the observation)
            return f"Error when executing tool: {type(exc).__name__}: {exc}", "error"
        return extract_response(reply), "ok"

    def respond_many(self, calls: Sequence[Any], *, tools: Tools = None, recorded: Recorded = None
                     ) -> list[Observation]:
        """One turn's calls, sent concurrently; identical calls are sent once."""
        tool_index, recorded_index = self._context(tools, recorded)
        normed = [as_call(c) for c in calls]
        keys = [(c.name, c.error if c.arguments is None else canonical_json(c.arguments)) for c in normed]
        unique = dict(zip(keys, normed))
        if not unique:
            return []
        workers = min(len(unique), self.cfg.max_concurrency)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            answers = dict(zip(unique, pool.map(lambda c: self.answer(c, tool_index, recorded_index),
                                                unique.values())))
        return [self._finish(*answers[k]) for k in keys]
