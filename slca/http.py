"""The one HTTP client slca talks to OpenAI-compatible endpoints with: the `openai` generator, the
`llm` judge and the `sgls` simulator (docs/eval.md#one-http-client). Stdlib only.

The endpoints are not ours, so the client treats them as hostile. Rules, the same for every caller
(knobs: slca.config.http.HttpEndpoint):
- each attempt has one deadline, `timeout_s`, for connect, headers and the whole body together (a
  server trickling bytes or sending an endless body is cut off there), and counts as a timeout;
- a reply body past `max_reply_bytes` fails at once, unread beyond the cap;
- redirects are never followed (a 3xx fails at once), so the API key never reaches another origin;
- a reply whose JSON nests deeper than MAX_JSON_DEPTH is unusable; the depth is counted in one
  linear pass before parsing, so no reply can exhaust the recursion limit;
- retried, up to `max_retries` extra attempts, attempt k sleeping k x `retry_backoff_s`: timeouts,
  connection errors, HTTP 408/409/429/5xx, and a 200 whose body the caller cannot use (not JSON,
  too deep, or its `extract` raises KeyError/IndexError/TypeError/ValueError: a proxy or server glitch);
- other HTTP codes fail at once; every failure ends in one `EndpointError`, one line naming the URL
  and the cause;
- at most `max_concurrency` requests are in flight per client (a semaphore around each request,
  whatever threads the caller uses; `map` runs that many at a time);
- with `cache_dir`, replies are stored on disk under sha256(route, request body) and a cached reply
  is answered without a request; the base URL and the API key are not part of the key (the same
  model behind another address is the same request). Only replies the caller accepts are stored.
- no proxies from the environment: behaviour comes from config alone.
"""

from __future__ import annotations

import hashlib
import heapq
import http.client
import json
import logging
import operator
import os
import re
import socket
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from itertools import accumulate, count
from pathlib import Path
from typing import Any, TypeVar

from slca.config.http import HttpEndpoint
from slca.fileio import atomic_write_text

T = TypeVar("T")
U = TypeVar("U")
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
MAX_JSON_DEPTH = 512  # far above any real reply, far below the interpreter's recursion limit
READ_CHUNK = 1 << 16
log = logging.getLogger(__name__)


class EndpointError(RuntimeError):
    """An endpoint failed after every retry, or refused the request; str() is one line naming the URL."""


class _Retry(Exception):
    pass


class _Refused(Exception):
    """A reply that fails the request at once (too large, a redirect, a client error); str() is the cause."""


# A JSON string, its closing quote optional so an unterminated one ends the scan instead of being
# retried from every later quote (which would be quadratic).
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_OPENER_TWO_CLOSER_ZERO = bytes.maketrans(b"[{]}", bytes([2, 2, 0, 0]))


def json_depth(text: str) -> int:
    """How deep brackets nest outside strings in `text`: one linear pass, no recursion. For valid JSON it
    is the nesting depth; for anything else it is at least as deep as json.loads would get before failing."""
    brackets = _NOT_BRACKETS.sub("", _JSON_STRING.sub("", text)).encode("ascii")
    # Depth after bracket i is (sum of 2 per opener, 0 per closer, up to i) - (i + 1): all of it in C.
    steps = brackets.translate(_OPENER_TWO_CLOSER_ZERO)
    return max(0, max(map(operator.sub, accumulate(steps), count(1)), default=0))


def parse_json_reply(raw: bytes) -> Any:
    """The JSON value of a reply body; ValueError (one line) when it is not JSON or nests deeper than MAX_JSON_DEPTH."""
    try:
        text = raw.decode(json.detect_encoding(raw), "surrogatepass")  # what json.loads(bytes) decodes with
        depth = json_depth(text)
        value = json.loads(text) if depth <= MAX_JSON_DEPTH else None
    except ValueError:  # undecodable bytes or not JSON
        raise ValueError(f"reply is not JSON: {raw[:120]!r}") from None
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"reply JSON nests {depth} levels deep, over {MAX_JSON_DEPTH}")
    return value


def read_capped(resp: http.client.HTTPResponse, cap: int) -> bytes:
    """The whole body of `resp`; _Refused as soon as it is known to exceed `cap` bytes (never reads past cap + 1)."""
    if resp.length is not None and resp.length > cap:
        raise _Refused(f"reply body of {resp.length} bytes is over max_reply_bytes={cap}")
    chunks, size = [], 0
    while chunk := resp.read(min(READ_CHUNK, cap + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            raise _Refused(f"reply body is over max_reply_bytes={cap}")
    return b"".join(chunks)


class _Deadline:
    """Hangs up a connection when its time is up, whatever it is doing then (connecting, TLS, headers,
    body): socket timeouts bound each read only, and a server trickling bytes never trips them."""

    def __init__(self, conn: http.client.HTTPConnection, seconds: float, watchdog: _Watchdog) -> None:
        self.expired = False
        self.at = time.monotonic() + seconds
        self._conn: http.client.HTTPConnection | None = conn
        self._watchdog = watchdog
        self._lock = threading.Lock()  # a hang-up and the end of the exchange never interleave

    @property
    def ended(self) -> bool:
        """Whether the exchange ended (in time or not): nothing is left to hang up."""
        return self._conn is None

    def hang_up(self) -> None:
        with self._lock:
            if self._conn is None:  # the exchange ended in time
                return
            self.expired = True
            sock = self._conn.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)  # wakes the reader blocked in recv
                except OSError:
                    pass

    def connect(self) -> None:
        """Connect; a hang-up that came while there was no socket yet to shut is not lost."""
        assert self._conn is not None
        self._conn.connect()
        if self.expired:
            raise TimeoutError("deadline passed while connecting")

    def __enter__(self) -> _Deadline:
        self._watchdog.watch(self)
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._conn = None
        self._watchdog.forget(self)


class _Watchdog:
    """One thread per client hanging up the connections whose deadline passed (a timer thread per
    request cost ~0.4 ms, most of a local request); it exits after IDLE_EXIT_S without deadlines."""

    IDLE_EXIT_S = 5.0

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, _Deadline]] = []
        self._ended = 0  # deadlines in the heap whose exchange ended: dropped in bulk, not one by one
        self._order = count()
        self._running = False

    def watch(self, deadline: _Deadline) -> None:
        with self._cond:
            heapq.heappush(self._heap, (deadline.at, next(self._order), deadline))
            if not self._running:
                self._running = True
                threading.Thread(target=self._run, name="slca-http-deadlines", daemon=True).start()
            elif self._heap[0][2] is deadline:
                self._cond.notify()

    def forget(self, deadline: _Deadline) -> None:
        with self._cond:
            self._ended += 1
            if self._ended > 64 and 2 * self._ended > len(self._heap):
                self._heap = [e for e in self._heap if not e[2].ended]
                heapq.heapify(self._heap)
                self._ended = 0

    def _run(self) -> None:
        with self._cond:
            while True:
                while self._heap and self._heap[0][2].ended:
                    heapq.heappop(self._heap)
                    self._ended -= 1
                if not self._heap:
                    self._ended = 0
                    if not self._cond.wait(self.IDLE_EXIT_S) and not self._heap:
                        self._running = False
                        return
                    continue
                wait = self._heap[0][0] - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                heapq.heappop(self._heap)[2].hang_up()


def cache_key(route: str, body: Any) -> str:
    """sha256 of the canonical JSON of (route, body); surrogatepass so lone surrogates in model text still hash."""
    text = json.dumps([route, body], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _always(value: Any) -> bool:
    return True


class HttpClient:
    """POSTs JSON to `cfg.base_url + route` under the rules of the module docstring."""

    def __init__(self, cfg: HttpEndpoint, route: str) -> None:
        self.cfg = cfg
        self.route = route
        self.url = cfg.base_url.rstrip("/") + route
        self._slots = threading.BoundedSemaphore(cfg.max_concurrency)
        self._lock = threading.Lock()
        self._watchdog = _Watchdog()
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = 0
        self.stats: Counter[str] = Counter()

    def _count(self, key: str) -> None:
        with self._lock:
            self.stats[key] += 1

    # --- cache ---------------------------------------------------------------------------------
    def cache_path(self, body: Any) -> Path | None:
        if self.cfg.cache_dir is None:
            return None
        key = cache_key(self.route, body)
        return Path(self.cfg.cache_dir) / key[:2] / f"{key}.json"

    def _cached(self, path: Path | None) -> Any:
        if path is None:
            return None
        try:
            with open(path, encoding="utf-8") as fh:
                return json.load(fh)["reply"]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _store(self, path: Path | None, reply: Any) -> None:
        if path is None:
            return
        try:
            # ASCII escapes: a lone surrogate in a reply must not make the file unwritable.
            atomic_write_text(path, json.dumps({"reply": reply}), fsync=False)
        except OSError as exc:  # a cache that cannot be written only costs a later request
            log.warning("reply cache write failed: %s", exc)

    # --- transport -----------------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.cfg.api_key_env) if self.cfg.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _connection(self, timeout_s: float) -> tuple[http.client.HTTPConnection, str]:
        """A new connection to the endpoint and the request target (http.client: no proxies, no
        redirects); _Refused on a URL it cannot reach."""
        try:
            parts = urllib.parse.urlsplit(self.url)
            port = parts.port
        except ValueError as exc:
            raise _Refused(f"bad base_url: {exc}") from None
        kinds = {"http": http.client.HTTPConnection, "https": http.client.HTTPSConnection}
        if parts.scheme not in kinds or not parts.hostname:
            raise _Refused("base_url must be an http:// or https:// URL with a host")
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return kinds[parts.scheme](parts.hostname, port, timeout=timeout_s), target  # also bounds each socket operation

    def _exchange(self, conn: http.client.HTTPConnection, target: str, data: bytes, headers: dict[str, str], cap: int) -> tuple[int, bytes]:
        """(status, body) of one POST; only a 2xx body is read whole, up to `cap` bytes."""
        conn.request("POST", target, body=data, headers=headers)
        resp = conn.getresponse()
        if 200 <= resp.status < 300:
            return resp.status, read_capped(resp, cap)
        if 300 <= resp.status < 400:
            return resp.status, b""  # never read: a redirect's body is not an answer
        return resp.status, resp.read(200)  # enough to name the cause

    def _once(self, data: bytes) -> Any:
        self._count("requests")
        timeout_s, cap = self.cfg.timeout_s, self.cfg.max_reply_bytes  # this attempt's limits
        headers = self._headers()  # the key is looked up for every attempt, even one that cannot connect
        late = f"no complete reply within timeout_s={timeout_s:g} s"
        with self._slots:
            conn, target = self._connection(timeout_s)
            deadline = _Deadline(conn, timeout_s, self._watchdog)
            try:
                with deadline:
                    deadline.connect()
                    status, raw = self._exchange(conn, target, data, headers, cap)
            except (OSError, ValueError, http.client.HTTPException) as exc:  # refused, reset, timed out, malformed
                raise _Retry(late if deadline.expired else f"{type(exc).__name__}: {exc}") from None
            finally:
                conn.close()
        if deadline.expired:  # a body without a length ends at the hang-up looking complete
            raise _Retry(late)
        return self._answer(status, raw)

    def _answer(self, status: int, raw: bytes) -> Any:
        """The JSON of a 2xx body; _Retry or _Refused for anything else, by the module's rules."""
        if 300 <= status < 400:
            raise _Refused(f"HTTP {status}: redirects are not followed")
        if status in RETRY_STATUS:
            raise _Retry(f"HTTP {status}")
        if not 200 <= status < 300:
            raise _Refused(f"HTTP {status}: {raw!r}")
        try:
            return parse_json_reply(raw)
        except ValueError as exc:
            raise _Retry(str(exc)) from None

    def cached(self, body: dict[str, Any], extract: Callable[[Any], T], *, accept: Callable[[T], bool] = _always) -> T | None:
        """extract(cached reply) for `body` when the cache holds an accepted one, else None (no request is made)."""
        reply = self._cached(self.cache_path(body))
        if reply is None:
            return None
        try:
            value = extract(reply)
        except (KeyError, IndexError, TypeError, ValueError):
            return None
        if not accept(value):
            return None
        self._count("cache_hits")
        return value

    def post(self, body: dict[str, Any], extract: Callable[[Any], T], *, accept: Callable[[T], bool] = _always) -> T:
        """extract(reply JSON) for `body`, from the cache or the endpoint; `accept(value)` decides whether it is cached."""
        value = self.cached(body, extract, accept=accept)
        if value is not None:
            return value
        path = self.cache_path(body)
        data = json.dumps(body).encode("utf-8", "surrogatepass")
        attempts = self.cfg.max_retries + 1
        last = ""
        for attempt in range(attempts):
            if attempt:
                self._count("retries")
                time.sleep(self.cfg.retry_backoff_s * attempt)
            try:
                reply = self._once(data)
                value = extract(reply)
            except _Refused as exc:
                self._count("failures")
                raise EndpointError(f"{self.url}: {exc}") from None
            except _Retry as exc:
                last = str(exc)
                continue
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                last = f"unusable reply ({type(exc).__name__}: {exc})"
                continue
            if accept(value):
                self._store(path, reply)
            return value
        self._count("failures")
        raise EndpointError(f"{self.url}: failed after {attempts} attempt{'s' if attempts > 1 else ''}: {last}")

    def map(self, fn: Callable[[U], T], items: Sequence[U]) -> list[T]:
        """[fn(x) for x in items] with at most max_concurrency at a time, in order; every call has ended
        when it returns or raises (the first failure, in order). `fn` must not call `map` on this client."""
        items = list(items)
        if len(items) <= 1 or self.cfg.max_concurrency == 1:
            return [fn(x) for x in items]
        futures = [self._workers().submit(fn, x) for x in items]
        wait(futures)
        return [f.result() for f in futures]

    def _workers(self) -> ThreadPoolExecutor:
        """The client's request threads, started as needed and kept: a rollout round sent in parts would
        otherwise start max_concurrency threads per part. A forked process starts its own."""
        with self._lock:
            if self._pool is None or self._pool_pid != os.getpid():
                self._pool = ThreadPoolExecutor(self.cfg.max_concurrency, thread_name_prefix="slca-http")
                self._pool_pid = os.getpid()
            return self._pool


def chat_content(reply: Any) -> str:
    """choices[0].message.content of a chat-completions reply; TypeError when it is not text."""
    content = reply["choices"][0]["message"]["content"]
    if not isinstance(content, str):
        raise TypeError(f"reply content is {type(content).__name__}, not a string")
    return content
