"""The one HTTP client slca talks to OpenAI-compatible endpoints with: the `openai` generator, the
`llm` judge and the `sgls` simulator (docs/eval.md#one-http-client). Stdlib only.

Rules, the same for every caller (knobs: slca.config.http.HttpEndpoint):
- retried, up to `max_retries` extra attempts, attempt k sleeping k x `retry_backoff_s`: timeouts,
  connection errors, HTTP 408/409/429/5xx, and a 200 whose body the caller cannot use (not JSON, or
  its `extract` raises KeyError/IndexError/TypeError/ValueError: a proxy or server glitch);
- other HTTP codes fail at once; every failure ends in one `EndpointError` naming the URL;
- at most `max_concurrency` requests are in flight per client (a semaphore around each request,
  whatever threads the caller uses; `map` runs that many at a time);
- with `cache_dir`, replies are stored on disk under sha256(route, request body) and a cached reply
  is answered without a request; the base URL and the API key are not part of the key (the same
  model behind another address is the same request). Only replies the caller accepts are stored.
- no proxies from the environment: behaviour comes from config alone.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from slca.config.http import HttpEndpoint
from slca.fileio import atomic_write_text

T = TypeVar("T")
U = TypeVar("U")
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
log = logging.getLogger(__name__)


class EndpointError(RuntimeError):
    """An endpoint failed after every retry, or refused the request; str() is one line naming the URL."""


class _Retry(Exception):
    pass


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
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self._lock = threading.Lock()
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

    def _once(self, data: bytes) -> Any:
        request = urllib.request.Request(self.url, data=data, headers=self._headers(), method="POST")
        self._count("requests")
        try:
            with self._slots, self._opener.open(request, timeout=self.cfg.timeout_s) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200] if exc.fp is not None else b""
            if exc.code in RETRY_STATUS:
                raise _Retry(f"HTTP {exc.code}") from None
            raise EndpointError(f"{self.url}: HTTP {exc.code}: {detail!r}") from None
        except (OSError, ValueError) as exc:  # URLError, timeouts, resets, a bad URL
            raise _Retry(f"{type(exc).__name__}: {exc}") from None
        try:
            return json.loads(raw)
        except ValueError:
            raise _Retry(f"reply is not JSON: {raw[:120]!r}") from None

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
        """[fn(x) for x in items] with at most max_concurrency at a time, in order."""
        items = list(items)
        if len(items) <= 1 or self.cfg.max_concurrency == 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(min(self.cfg.max_concurrency, len(items))) as pool:
            return list(pool.map(fn, items))


def chat_content(reply: Any) -> str:
    """choices[0].message.content of a chat-completions reply; TypeError when it is not text."""
    content = reply["choices"][0]["message"]["content"]
    if not isinstance(content, str):
        raise TypeError(f"reply content is {type(content).__name__}, not a string")
    return content
