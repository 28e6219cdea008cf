"""A real HTTP server on 127.0.0.1 playing an OpenAI-compatible endpoint with scripted replies."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


def chat_reply(content: str) -> bytes:
    return json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}).encode()


@dataclass
class FakeEndpoint:
    url: str
    # Each entry: (status, body bytes, delay seconds); when empty, a default tool_response is served.
    script: list[tuple[int, bytes, float]] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @staticmethod
    def chat(content: str) -> bytes:
        """A chat-completions body whose single choice says `content`."""
        return chat_reply(content)


@pytest.fixture
def endpoint():
    state: dict = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server naming)
            ep: FakeEndpoint = state["ep"]
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with ep.lock:
                ep.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status, payload, delay = ep.script.pop(0) if ep.script else (
                    200, chat_reply('<tool_response>{"default": true}</tool_response>'), 0.0)
            time.sleep(delay)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:  # the client timed out and closed the socket
                pass

        def log_message(self, *args):  # keep test output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state["ep"] = FakeEndpoint(url=f"http://127.0.0.1:{server.server_address[1]}/v1")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield state["ep"]
    server.shutdown()
    server.server_close()
