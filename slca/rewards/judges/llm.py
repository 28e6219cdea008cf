"""`llm`: a summary judge behind an OpenAI-compatible `/chat/completions` endpoint (docs/method.md#summary-judge).

Stdlib only (urllib). `timeout_s` bounds each socket operation (connect, each read). Transport errors and HTTP >= 500 are retried `max_retries` times with
linear backoff (`retry_delay_s` × attempt); other non-200 answers, bodies without choices and
unparseable ratings fail at once. Failures score `failure_score` and are flagged, never raised.
Successful answers are cached on disk under sha256(model, prompt); at most `concurrency`
requests are in flight per judge.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

from slca.config.groups.reward import JudgeConfig
from slca.fileio import atomic_write_text
from slca.rewards.judges.base import LABEL_SCORES, JudgeRequest, JudgeResult, register_judge
from slca.rewards.judges.prompt import build_prompt, parse_rating


class DiskCache:
    """Text values under `root/<key[:2]>/<key>.json`, each written atomically."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        try:
            with open(self._path(key), encoding="utf-8") as f:
                value = json.load(f).get("content")
        except (OSError, ValueError, AttributeError):
            return None
        return value if isinstance(value, str) else None

    def put(self, key: str, content: str, **meta: Any) -> None:
        try:
            # ASCII escapes: a lone surrogate in the answer must not make the file unwritable
            payload = json.dumps({"content": content, **meta})
            atomic_write_text(self._path(key), payload, fsync=False)
        except OSError:
            pass  # a cache that cannot be written only costs a repeated request


def cache_key(model: str, prompt: str) -> str:
    # surrogatepass: a model answer may hold lone surrogates, which strict UTF-8 refuses
    return hashlib.sha256(json.dumps([model, prompt], ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()


class _Retryable(Exception):
    pass


@register_judge("llm")
class LLMJudge:
    """Rates the final answer on the 5-label rubric via a chat endpoint; see module docstring."""

    name = "llm"

    def __init__(self, cfg: JudgeConfig) -> None:
        self.cfg = cfg
        self.url = cfg.base_url.rstrip("/") + "/chat/completions"
        self.cache = DiskCache(cfg.cache_dir) if cfg.cache_dir else None
        self._slots = threading.BoundedSemaphore(cfg.concurrency)
        # No proxies from the environment: behaviour must not hide in env vars (the reference's
        # aiohttp session ignores them too).
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self._fail = JudgeResult(cfg.failure_score, "judge_failed", failed=True)
        self._parse_fail = JudgeResult(cfg.failure_score, "parse_failed", parse_failed=True)
        self._lock = threading.Lock()
        self.stats = {"requests": 0, "cache_hits": 0, "failed": 0, "parse_failed": 0}

    def _count(self, key: str) -> None:
        with self._lock:
            self.stats[key] += 1

    def _post(self, prompt: str) -> str | None:
        """One request with retries; the message content, or None on failure."""
        body = json.dumps(
            {
                "model": self.cfg.model,
                "messages": [{"role": "user", "content": prompt}],
                "temperature": self.cfg.temperature,
                "max_tokens": self.cfg.max_tokens,
            }
        ).encode("utf-8")
        headers = {
            "Content-Type": "application/json",
            "Authorization": f"Bearer {os.environ.get(self.cfg.api_key_env) or 'EMPTY'}",
        }
        for attempt in range(self.cfg.max_retries + 1):
            if attempt:
                time.sleep(self.cfg.retry_delay_s * attempt)
            try:
                return self._once(body, headers)
            except _Retryable:
                continue
        return None

    def _once(self, body: bytes, headers: dict[str, str]) -> str | None:
        req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        self._count("requests")
        try:
            with self._slots, self._opener.open(req, timeout=self.cfg.timeout_s) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            if e.code >= 500:
                raise _Retryable from e
            return None
        except (OSError, ValueError) as e:  # URLError, timeouts, resets, bad URL
            raise _Retryable from e
        try:
            content = json.loads(raw)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            return None
        return content if isinstance(content, str) else None

    def score(self, req: JudgeRequest) -> JudgeResult:
        prompt = build_prompt(req, self.cfg.prompt_style)
        key = cache_key(self.cfg.model, prompt)
        if self.cache is not None:
            content = self.cache.get(key)
            label = parse_rating(content) if content is not None else None
            if label is not None:
                self._count("cache_hits")
                return JudgeResult(LABEL_SCORES[label], label, cached=True)
        content = self._post(prompt)
        if content is None:
            self._count("failed")
            return self._fail
        label = parse_rating(content)
        if label is None:
            self._count("parse_failed")
            return self._parse_fail
        if self.cache is not None:
            self.cache.put(key, content, model=self.cfg.model)
        return JudgeResult(LABEL_SCORES[label], label)

    def score_batch(self, reqs: Sequence[JudgeRequest]) -> list[JudgeResult]:
        """Score many requests with at most `concurrency` in flight; identical requests are sent once."""
        unique: dict[JudgeRequest, int] = {}
        order = [unique.setdefault(r, len(unique)) for r in reqs]
        todo = list(unique)
        if len(todo) <= 1:
            results = [self.score(r) for r in todo]
        else:
            with ThreadPoolExecutor(max_workers=min(self.cfg.concurrency, len(todo))) as pool:
                results = list(pool.map(self.score, todo))
        return [results[i] for i in order]
