"""Shared test fixtures. Tests run offline: W&B never syncs, hub libraries never reach the network."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

# The SLURM test cluster fixture, shared by tests/launch and verl's SLURM twin (one cluster per session); the
# stage cache (data and SFT stages built once per spec); how tests share pytest-xdist's workers; each spec
# composition run once per worker.
pytest_plugins = ("tests.launch.cluster", "tests.stages", "tests.lanes", "tests.compositions")

# Set before any test imports transformers, datasets or wandb: nothing in the suite may touch a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("WANDB_SILENT", "true")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `gpu` run only where CUDA is available (they are real GPU paths, not skipped stubs)."""
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:
        has_cuda = False
    if has_cuda:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


class ScriptedEndpoint:
    """A real HTTP server on 127.0.0.1 standing in for an OpenAI-compatible service.

    Every POST is recorded in `requests` ({path, headers, body}); replies are taken from `script`
    ((status, body bytes, delay seconds), in order), then from `default(request body)`.
    """

    def __init__(self, default: Callable[[dict], tuple[int, bytes, float]]) -> None:
        self.default = default
        self.script: list[tuple[int, bytes, float]] = []
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.url = ""


@contextmanager
def serve_scripted(default: Callable[[dict], tuple[int, bytes, float]]) -> Iterator[ScriptedEndpoint]:
    """Start a `ScriptedEndpoint` on a free port; stop it on exit."""
    endpoint = ScriptedEndpoint(default)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server naming)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with endpoint.lock:
                endpoint.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status, payload, delay = endpoint.script.pop(0) if endpoint.script else endpoint.default(body)
            time.sleep(delay)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:  # the client timed out and closed the socket
                pass

        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    endpoint.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()
