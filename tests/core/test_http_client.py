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
from slca.http import EndpointError, HttpClient, cache_key, chat_content, json_depth
from tests.scaling import assert_linear

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


def test_map_keeps_its_threads_between_calls_and_every_call_has_ended_when_one_fails(server):
    client, key = client_for(server, "busy", max_concurrency=4)
    seen: set[threading.Thread] = set()

    def ask(i):
        seen.add(threading.current_thread())
        return client.post({"q": i}, chat_content)

    for _ in range(5):  # a round sent in five parts
        assert client.map(ask, range(8)) == [f"echo {i}" for i in range(8)]
    assert len(seen) <= 4 and server.peak[key] <= 4
    ended = []

    def fail_first(i):
        if i == 0:
            raise RuntimeError("refused")
        time.sleep(0.05)
        ended.append(i)

    with pytest.raises(RuntimeError, match="refused"):
        client.map(fail_first, range(6))
    assert sorted(ended) == [1, 2, 3, 4, 5]  # none still running when the failure surfaced


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


# --- a hostile endpoint -------------------------------------------------------------------------
# A server that misbehaves on purpose, by the first path segment; each handler gives up by itself
# after HOSTILE_LIFE_S (or as soon as the client hangs up), so no test leaves a thread writing.
HOSTILE_LIFE_S = 6.0
CAP = 64 * 1024  # max_reply_bytes in these tests


class _Hostile(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802 (http.server naming)
        self.rfile.read(int(self.headers["Content-Length"]))
        case = self.path.strip("/").split("/")[0]
        with self.server.lock:
            self.server.hits[case] = self.server.hits.get(case, 0) + 1
            self.server.auth[case] = self.headers.get("Authorization")
        try:
            getattr(self, f"_{case}")()
        except OSError:  # the client hung up, as it should
            pass

    def _send(self, status, body, headers=()):
        self.send_response(status)
        for name, value in (("Content-Length", str(len(body))), *headers):
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _until_given_up(self, pause_s):
        """Yield until the handler's life is over, sleeping `pause_s` between steps."""
        stop = time.monotonic() + HOSTILE_LIFE_S
        while time.monotonic() < stop:
            yield
            time.sleep(pause_s)

    def _trickle_body(self):
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        for _ in self._until_given_up(0.2):
            self.wfile.write(b" ")

    def _trickle_headers(self):
        for byte, _ in zip(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n" + b"X-Slow: x\r\n" * 1000, self._until_given_up(0.2)):
            self.wfile.write(bytes([byte]))

    def _endless_chunked(self):
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for _ in self._until_given_up(0.05):
            self.wfile.write(b"10\r\n" + b"[" * 16 + b"\r\n")

    def _flood_chunked(self):  # as fast as the socket takes it: the size cap, not the deadline, ends it
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for _ in self._until_given_up(0.0):
            self.wfile.write(b"4000\r\n" + b" " * 0x4000 + b"\r\n")

    def _huge_declared(self):  # says 200 MB up front
        self.send_response(200)
        self.send_header("Content-Length", str(200 * 2**20))
        self.end_headers()
        for _ in self._until_given_up(0.0):
            self.wfile.write(b" " * 2**16)

    def _huge_undeclared(self):  # no length: the body runs until the server closes
        self.send_response(200)
        self.send_header("Connection", "close")
        self.end_headers()
        for _ in self._until_given_up(0.0):
            self.wfile.write(b" " * 2**16)

    def _redirect(self):
        status = int(self.path.strip("/").split("/")[1])
        self._send(status, b"", [("Location", f"{self.server.elsewhere}/v1/chat/completions")])

    def _deep_open(self):
        self._send(200, b"[" * 100_000)

    def _deep_valid(self):
        self._send(200, b"[" * 100_000 + b"]" * 100_000)

    def _deep_in_string(self):  # brackets inside a string are text, not nesting
        self._send(200, json.dumps({"choices": [{"message": {"content": "[" * 100_000 + '"{'}}]}).encode())

    def _garbage(self):
        self._send(200, bytes(range(256)) * 4)


class _Bystander(BaseHTTPRequestHandler):
    """Another origin: any connection at all is recorded (it must never get one)."""

    def setup(self):
        with self.server.lock:
            self.server.connections += 1
        super().setup()

    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802 (http.server naming)
        with self.server.lock:
            self.server.requests.append(dict(self.headers))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_POST = do_GET


def _serve(handler):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    srv.lock = threading.Lock()
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return srv


@pytest.fixture(scope="module")
def bystander():
    srv = _serve(_Bystander)
    srv.connections, srv.requests = 0, []
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def hostile(bystander):
    srv = _serve(_Hostile)
    srv.hits, srv.auth = {}, {}
    srv.elsewhere = f"http://127.0.0.1:{bystander.server_port}"
    yield srv
    srv.shutdown()
    srv.server_close()


def hostile_client(srv, case, **knobs):
    cfg = HttpEndpoint(base_url=f"http://127.0.0.1:{srv.server_port}/{case}/v1",
                       **{"retry_backoff_s": 0.0, "timeout_s": 1.0, "max_retries": 0, "max_reply_bytes": CAP, **knobs})
    return HttpClient(cfg, "/chat/completions")


def failure_of(client):
    """(the one-line EndpointError message, seconds until it came)."""
    start = time.monotonic()
    with pytest.raises(EndpointError) as caught:
        client.post({"q": 1}, chat_content)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{client.url}: ")
    return message, time.monotonic() - start


def test_a_server_trickling_body_bytes_is_cut_off_at_the_overall_deadline(hostile):
    message, elapsed = failure_of(hostile_client(hostile, "trickle_body"))
    assert "no complete reply within timeout_s=1 s" in message
    assert 0.9 < elapsed < 2.5  # each byte comes in 0.2 s, far inside any socket timeout


def test_a_server_trickling_header_bytes_is_cut_off_at_the_overall_deadline(hostile):
    message, elapsed = failure_of(hostile_client(hostile, "trickle_headers"))
    assert "no complete reply within timeout_s=1 s" in message and 0.9 < elapsed < 2.5


def test_the_deadline_covers_every_attempt_and_a_timed_out_attempt_is_retried(hostile):
    client = hostile_client(hostile, "trickle_body", timeout_s=0.5, max_retries=1)
    message, elapsed = failure_of(client)
    assert "failed after 2 attempts: no complete reply within timeout_s=0.5 s" in message and 0.9 < elapsed < 2.5


def test_an_endless_chunked_body_is_cut_off_at_the_overall_deadline(hostile):
    message, elapsed = failure_of(hostile_client(hostile, "endless_chunked", max_reply_bytes=2**20))
    assert "no complete reply within timeout_s=1 s" in message and 0.9 < elapsed < 2.5


@pytest.mark.parametrize("case", ["flood_chunked", "huge_declared", "huge_undeclared"])
def test_a_body_beyond_max_reply_bytes_fails_at_once_without_being_read_whole(hostile, case):
    client = hostile_client(hostile, case, timeout_s=5.0, max_retries=3)
    message, elapsed = failure_of(client)
    assert f"over max_reply_bytes={CAP}" in message and elapsed < 2.0
    assert hostile.hits[case] == 1  # not retried: a larger reply would come again


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_refused_and_the_api_key_never_reaches_the_other_origin(hostile, bystander, monkeypatch, status):
    monkeypatch.setenv("SLCA_TEST_HOSTILE_KEY", "sk-never-elsewhere")
    client = hostile_client(hostile, f"redirect/{status}", api_key_env="SLCA_TEST_HOSTILE_KEY", max_retries=3)
    message, elapsed = failure_of(client)
    assert message == f"{client.url}: HTTP {status}: redirects are not followed" and elapsed < 2.0
    assert hostile.hits["redirect"] >= 1 and hostile.auth["redirect"] == "Bearer sk-never-elsewhere"  # the named endpoint only
    time.sleep(0.1)  # a connection attempt the client made would have been accepted by now
    assert bystander.connections == 0 and bystander.requests == []


def test_the_redirect_target_is_reachable_so_the_redirect_test_can_fail(bystander):
    # the check above means something only if the bystander records what reaches it
    before = bystander.connections
    client = HttpClient(HttpEndpoint(base_url=f"http://127.0.0.1:{bystander.server_port}/v1", max_retries=0, timeout_s=2.0),
                        "/chat/completions")
    assert client.post({"q": 1}, lambda reply: reply) == {}
    assert bystander.connections == before + 1 and len(bystander.requests) == 1
    bystander.requests.clear()
    bystander.connections = before


@pytest.mark.parametrize("case", ["deep_open", "deep_valid"])
def test_a_deeply_nested_reply_is_an_endpoint_error_not_a_recursion_error(hostile, case):
    message, elapsed = failure_of(hostile_client(hostile, case, max_reply_bytes=2**20))
    assert "nests 100000 levels deep, over 512" in message and elapsed < 2.0


def test_brackets_inside_json_strings_do_not_count_as_nesting(hostile):
    assert hostile_client(hostile, "deep_in_string", max_reply_bytes=2**20).post({"q": 1}, chat_content) == "[" * 100_000 + '"{'


def test_garbage_bytes_are_an_endpoint_error_naming_the_cause(hostile):
    client = hostile_client(hostile, "garbage", max_retries=1)
    message, elapsed = failure_of(client)
    assert "failed after 2 attempts: reply is not JSON: b'\\x00\\x01" in message and elapsed < 2.0
    assert hostile.hits["garbage"] == 2  # a body the caller cannot use is retried, as before


@pytest.mark.parametrize("text, depth", [
    ("{}", 1), ('{"a": [1, {"b": []}]}', 4), ('"[[[["', 0), ('["\\"]", [[]]]', 3), ('"\\\\" [[', 2), ('"unterminated [[[', 0), ("1", 0),
])
def test_json_depth_counts_brackets_outside_strings_only(text, depth):
    assert json_depth(text) == depth


def test_json_depth_is_linear_on_hostile_text():
    assert json_depth('"\\"' * 500_000) == 0  # an unterminated string of escaped quotes
    assert json_depth("[" * 1_000_000) == 1_000_000
    assert_linear(lambda size: json_depth('"\\"' * size), 60_000)
    assert_linear(lambda size: json_depth("[" * size), 120_000)
