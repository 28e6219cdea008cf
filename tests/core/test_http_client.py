"""slca's one HTTP client against a real threaded http.server on 127.0.0.1: retries, timeout,
concurrency cap, on-disk cache, and the same knobs for the generator, the judge and the simulator."""

from __future__ import annotations

import itertools
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from slca.config.groups.eval import EvalEndpoint
from slca.config.groups.reward import JudgeConfig
from slca.config.groups.simulator import SglsSimulator
from slca.config.http import HttpEndpoint
from slca.http import EndpointError, HttpClient, cache_key, chat_content

OK = {"choices": [{"message": {"content": "fine"}}]}


class _Handler(BaseHTTPRequestHandler):
    """Behaviour by the first path segment; counts hits and requests in flight per test prefix."""

    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802 (http.server naming)
        srv = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        case, key = self.path.strip("/").split("/")[0], "/".join(self.path.strip("/").split("/")[:2])
        with srv.lock:
            n = srv.hits[key] = srv.hits.get(key, 0) + 1
            srv.inflight[key] = srv.inflight.get(key, 0) + 1
            srv.peak[key] = max(srv.peak.get(key, 0), srv.inflight[key])
            srv.auth[key] = self.headers.get("Authorization")
        code, payload, delay = 200, json.dumps({"choices": [{"message": {"content": f"echo {body.get('q')}"}}]}).encode(), 0.0
        if case == "flaky" and n <= 2:
            code, payload = 503, b'{"error": "busy"}'
        elif case == "late" and n == 1:
            delay = 1.0
        elif case == "badrequest":
            code, payload = 400, b'{"error": "bad"}'
        elif case == "garbage" and n == 1:
            payload = b"<html>proxy error</html>"
        elif case == "down":
            code, payload = 500, b"{}"
        elif case == "busy":
            delay = 0.1
        time.sleep(delay)
        with srv.lock:
            srv.inflight[key] -= 1
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except OSError:  # the client timed out and hung up
            pass


@pytest.fixture(scope="module")
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    srv.lock = threading.Lock()
    srv.hits, srv.inflight, srv.peak, srv.auth = {}, {}, {}, {}
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


_ids = itertools.count()


def client_for(server, case, **knobs):
    key = f"{case}/{next(_ids)}"
    cfg = HttpEndpoint(base_url=f"http://127.0.0.1:{server.server_port}/{key}/v1", **{"retry_backoff_s": 0.0, "timeout_s": 5.0, **knobs})
    return HttpClient(cfg, "/chat/completions"), key


def test_a_server_error_is_retried_with_backoff_until_it_succeeds(server):
    client, key = client_for(server, "flaky", max_retries=3, retry_backoff_s=0.05)
    start = time.monotonic()
    assert client.post({"q": 1}, chat_content) == "echo 1"
    # two failures: sleeps of 1 x 0.05 and 2 x 0.05 before the second and third attempts
    assert server.hits[key] == 3 and time.monotonic() - start >= 0.15 and client.stats["retries"] == 2


def test_a_timeout_is_retried_and_bounded_by_timeout_s(server):
    client, key = client_for(server, "late", max_retries=1, timeout_s=0.3)
    start = time.monotonic()
    assert client.post({"q": 2}, chat_content) == "echo 2"
    assert server.hits[key] == 2 and time.monotonic() - start < 0.95


def test_retries_are_bounded_and_the_failure_is_one_error_naming_the_url(server):
    client, key = client_for(server, "down", max_retries=2)
    with pytest.raises(EndpointError, match=rf"^{client.url}: failed after 3 attempts: HTTP 500$"):
        client.post({"q": 3}, chat_content)
    assert server.hits[key] == 3


def test_a_client_error_is_not_retried(server):
    client, key = client_for(server, "badrequest", max_retries=3)
    with pytest.raises(EndpointError, match="HTTP 400"):
        client.post({"q": 4}, chat_content)
    assert server.hits[key] == 1


def test_an_unusable_reply_body_is_retried(server):
    client, key = client_for(server, "garbage", max_retries=1)
    assert client.post({"q": 5}, chat_content) == "echo 5" and server.hits[key] == 2


def test_the_concurrency_cap_holds_whatever_threads_the_caller_uses(server):
    client, key = client_for(server, "busy", max_concurrency=3)
    with ThreadPoolExecutor(12) as pool:  # more caller threads than the cap
        answers = list(pool.map(lambda i: client.post({"q": i}, chat_content), range(12)))
    assert answers == [f"echo {i}" for i in range(12)]
    assert server.hits[key] == 12 and server.peak[key] == 3
    mapped, key2 = client_for(server, "busy", max_concurrency=2)
    assert mapped.map(lambda i: mapped.post({"q": i}, chat_content), range(6)) == [f"echo {i}" for i in range(6)]
    assert server.peak[key2] == 2


def test_a_cache_hit_makes_no_request_and_only_accepted_replies_are_stored(server, tmp_path):
    first, key = client_for(server, "ok", cache_dir=str(tmp_path))
    assert first.post({"q": 6}, chat_content) == "echo 6"
    again = HttpClient(first.cfg, "/chat/completions")  # a fresh client: only the disk can answer
    assert again.post({"q": 6}, chat_content) == "echo 6" and again.stats["cache_hits"] == 1 and again.stats["requests"] == 0
    assert server.hits[key] == 1
    (stored,) = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert stored.name == cache_key("/chat/completions", {"q": 6}) + ".json"
    assert again.post({"q": 7}, chat_content) == "echo 7" and server.hits[key] == 2  # another body is another request
    rejected, key3 = client_for(server, "ok", cache_dir=str(tmp_path / "rejecting"))
    rejected.post({"q": 8}, chat_content, accept=lambda text: False)
    rejected.post({"q": 8}, chat_content, accept=lambda text: False)
    assert server.hits[key3] == 2 and not any(p.is_file() for p in (tmp_path / "rejecting").rglob("*"))


def test_the_api_key_comes_only_from_the_named_environment_variable(server, monkeypatch):
    client, key = client_for(server, "ok", api_key_env="SLCA_TEST_HTTP_KEY")
    monkeypatch.delenv("SLCA_TEST_HTTP_KEY", raising=False)
    client.post({"q": 9}, chat_content)
    assert server.auth[key] is None
    monkeypatch.setenv("SLCA_TEST_HTTP_KEY", "sk-1")
    client.post({"q": 10}, chat_content)
    assert server.auth[key] == "Bearer sk-1"


def test_the_generator_the_judge_and_the_simulator_share_one_set_of_knobs():
    knobs = set(HttpEndpoint.model_fields)
    for model in (EvalEndpoint, JudgeConfig, SglsSimulator):
        assert issubclass(model, HttpEndpoint) and knobs <= set(model.model_fields)
        for name in knobs:  # same type, range and description; only the default may differ
            mine, shared = model.model_fields[name], HttpEndpoint.model_fields[name]
            assert (mine.annotation, mine.metadata, mine.description) == (shared.annotation, shared.metadata, shared.description)
