"""An OpenAI-compatible `/v1/chat/completions` endpoint serving the policy under evaluation (docs/tau2.md#how-it-runs).

τ² talks to its agent through litellm; this server is that agent's model. Each request's messages
and tools are rendered under one protocol cell (template construction, thinking, system prompt)
with the policy's own chat template, sampled with any slca generator (hf, vllm, openai) until the
turn ends, and the reply's hermes `<tool_call>` blocks are returned as OpenAI `tool_calls`. A turn
whose blocks do not parse comes back as plain text (τ² then treats it as a message to the user);
a prompt over the cap is refused with HTTP 400 and τ² scores that task 0.

The server is stdlib `http.server` on 127.0.0.1 with a free port; requests are answered one at a
time (the generator holds one model).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from slca.rollout.chat import TOOL_CALL_OPEN, ChatFormat
from slca.rollout.config import RolloutConfig
from slca.toolcall.parse import parse_hermes, strip_thinking
from slca.toolcall.templates import prompt_messages

MAX_BODY_BYTES = 64 << 20


@dataclass(frozen=True)
class Protocol:
    """How prompts are built for the served policy: one protocol cell plus the seed of this run."""

    construction: str
    thinking: str
    system_prompt: str
    seed: int


class BadRequest(ValueError):
    """A request this server cannot answer; str() is the message returned with HTTP 400."""


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def chat_messages(messages: Any) -> list[dict[str, Any]]:
    """OpenAI chat messages as the chat templates take them: tool-call arguments decoded to objects."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages must be a non-empty list")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or m.get("role") not in ("system", "user", "assistant", "tool"):
            raise BadRequest(f"messages[{i}]: needs a role of system, user, assistant or tool")
        msg: dict[str, Any] = {"role": m["role"], "content": m.get("content") or ""}
        if not isinstance(msg["content"], str):
            raise BadRequest(f"messages[{i}].content: only text content is served")
        calls = m.get("tool_calls") or []
        if m["role"] == "assistant" and calls:
            fns = [c.get("function") if isinstance(c, Mapping) else None for c in calls]
            if not all(isinstance(f, Mapping) and isinstance(f.get("name"), str) for f in fns):
                raise BadRequest(f"messages[{i}].tool_calls: each needs function.name")
            msg["tool_calls"] = [{"type": "function", "function": {"name": f["name"], "arguments": _arguments(f.get("arguments"))}}
                                 for f in fns]
        out.append(msg)
    return out


def reply_message(text: str) -> tuple[dict[str, Any], str]:
    """The assistant message (content and tool_calls) of one generated turn, and its finish reason.

    Calls come from hermes blocks that parse; text outside the blocks, thinking removed, is the content.
    """
    parsed = parse_hermes(text)
    calls = [c for b in parsed.blocks if b.valid for c in (b.calls or ())]
    visible = strip_thinking(text)
    content = visible[: visible.find(TOOL_CALL_OPEN)] if calls else visible
    message: dict[str, Any] = {"role": "assistant", "content": content.strip() or None}
    if calls:
        message["tool_calls"] = [{"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                                  "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
                                 for c in calls]
        return message, "tool_calls"
    if message["content"] is None:
        message["content"] = ""
    return message, "stop"


class PolicyServer:
    """Answers chat-completion requests with one generator under one protocol (see the module docstring)."""

    def __init__(self, generator: Any, tokenizer: Any, rollout_cfg: RolloutConfig, protocol: Protocol, served_name: str) -> None:
        self.generator = generator
        self.tokenizer = tokenizer
        self.cfg = rollout_cfg
        self.protocol = protocol
        self.served_name = served_name
        self.fmt = ChatFormat(tokenizer)
        # A whole turn is generated at once: parallel calls are several blocks before the end of turn.
        self.stops = set(self.fmt.stop_token_ids)
        self.lock = threading.Lock()
        self.requests = 0

    def complete(self, body: Mapping[str, Any]) -> dict[str, Any]:
        messages = chat_messages(body.get("messages"))
        tools = body.get("tools") or None
        if tools is not None and not isinstance(tools, list):
            raise BadRequest("tools must be a list")
        p = self.protocol
        msgs, template_tools = prompt_messages(messages, tools, construction=p.construction, thinking=p.thinking,
                                               system_prompt=p.system_prompt)
        prompt = self.fmt.render_prompt(msgs, template_tools)
        # verbose=False: the cap below refuses the prompt itself; transformers' "longer than the model" warning is noise.
        ids = self.tokenizer.encode(prompt, add_special_tokens=False, verbose=False)
        if len(ids) > self.cfg.max_prompt_length:
            raise BadRequest(f"prompt of {len(ids)} tokens exceeds eval.rollout.max_prompt_length={self.cfg.max_prompt_length}")
        cap = self.cfg.max_turn_tokens or self.cfg.max_response_length
        with self.lock:
            self.requests += 1
            seed = p.seed * 1_000_003 + self.requests
            out = self.generator.generate([ids], max_new_tokens=cap, temperature=self.cfg.temperature, top_p=self.cfg.top_p,
                                          stop_token_ids=self.stops, seed=seed)[0]
        text = self.fmt.decode_solution(out.token_ids)
        message, finish = reply_message(text)
        if out.finish_reason == "length" and finish == "stop":
            finish = "length"
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": "chat.completion", "created": int(time.time()),
                "model": self.served_name, "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": len(ids), "completion_tokens": len(out.token_ids), "total_tokens": len(ids) + len(out.token_ids)}}


def _handler(policy: PolicyServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client gave up and closed the socket
                pass

        def do_GET(self) -> None:  # noqa: N802 (http.server naming)
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": policy.served_name, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}; this server answers /v1/chat/completions"}})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                if not 0 < length <= MAX_BODY_BYTES:
                    raise BadRequest(f"request body of {length} bytes (1 to {MAX_BODY_BYTES} accepted)")
                body = json.loads(self.rfile.read(length))
                if not isinstance(body, dict):
                    raise BadRequest("request body must be a JSON object")
                self._send(200, policy.complete(body))
            except (BadRequest, ValueError) as exc:
                self._send(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
            except Exception as exc:  # the generator failed: τ² sees a server error, retries, then scores the task 0
                self._send(500, {"error": {"message": f"{type(exc).__name__}: {exc}", "type": "server_error"}})

        def log_message(self, *args: object) -> None:  # τ²'s requests are not logged line by line
            pass

    return Handler


@contextmanager
def serve_policy(policy: PolicyServer) -> Iterator[str]:
    """Serve `policy` on 127.0.0.1 (a free port) for the duration of the block; yields the base URL (…/v1)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(policy))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()

