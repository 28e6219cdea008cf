"""`sgls` simulator (docs/method.md#tool-simulators): an LLM behind an OpenAI-compatible endpoint plays the API server.

Requests go through slca's one HTTP client (slca/http.py). Differences from the reference, on
purpose: replies are cached on disk by request (so identical calls see identical observations,
docs/method.md#reference-quirks Q17), an unparseable reply body counts as a failed attempt and is retried, a `<think>` block in the reply is dropped before extraction, and
identical calls within one turn are sent once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from slca.http import HttpClient, cache_key, chat_content
from slca.sim.base import Recorded, Simulator, Tools, register_simulator
from slca.sim.checks import precheck
from slca.sim.types import Call, Observation, ObservationKind, ToolSpec, as_call, canonical_json


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


def build_prompt(schema: Mapping[str, Any], name: str, arguments: Mapping[str, Any]) -> str:
    """The single user message asking the model to answer `name(arguments)` as the API would."""
    request = [{"name": name, "parameters": dict(arguments), "depend_on": []}]
    return (
        f"{_PREAMBLE}\n"
        f"Tool Definition:\n{json.dumps(schema, indent=2, ensure_ascii=False)}\n\n"
        f"Incoming Request:\n<tool_call>\n{json.dumps(request, ensure_ascii=False)}\n</tool_call>\n\n"
        "Answer with the API response in <tool_response></tool_response> format and nothing else."
    )


def _pairs(text: str, tag: str) -> list[tuple[int, int]]:
    """(start, end) of each `<tag>…</tag>` body, paired left to right without overlap, each opening with the
    first closing after it: what `re.findall(r"<tag>(.*?)</tag>", re.S)` pairs. One forward scan, so
    linear: the regex rescanned to the end from every unclosed opening (quadratic)."""
    opening, closing = f"<{tag}>", f"</{tag}>"
    pairs, pos = [], 0
    while (start := text.find(opening, pos)) >= 0:
        end = text.find(closing, start + len(opening))
        if end < 0:  # no closing after this opening, so none after any later one either
            break
        pairs.append((start + len(opening), end))
        pos = end + len(closing)
    return pairs


def _strip_thinking(text: str) -> str:
    """Drop each `<think>…</think>` block, then keep what follows the last `</think>` (an opening tag eaten by the chat template)."""
    kept, pos = [], 0
    for start, end in _pairs(text, "think"):
        kept.append(text[pos:start - len("<think>")])
        pos = end + len("</think>")
    kept.append(text[pos:])
    return "".join(kept).rsplit("</think>", 1)[-1]


def _extract_once(text: str) -> str:
    for tag in ("tool_response", "tool_call"):
        pairs = _pairs(text, tag)
        if pairs:
            start, end = pairs[-1]
            return text[start:end].strip()
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
        self.client = HttpClient(cfg, "/chat/completions")

    def _body(self, prompt: str) -> dict[str, Any]:
        return {
            "model": self.cfg.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": self.cfg.temperature,
            "max_tokens": self.cfg.max_tokens,
        }

    def cache_key(self, prompt: str) -> str:
        """The reply-cache key of `prompt`'s request (slca/http.py)."""
        return cache_key(self.client.route, self._body(prompt))

    def complete(self, prompt: str) -> str:
        """Raw reply text for `prompt` (cache first); EndpointError after the client's retries."""
        return self.client.post(self._body(prompt), chat_content)

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
        answers = dict(zip(unique, self.client.map(lambda c: self.answer(c, tool_index, recorded_index), list(unique.values()))))
        return [self._finish(*answers[k]) for k in keys]
