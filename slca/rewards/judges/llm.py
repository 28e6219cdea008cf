"""`llm`: a summary judge behind an OpenAI-compatible `/chat/completions` endpoint (docs/method.md#summary-judge).

Requests go through slca's one HTTP client (slca/http.py: retries, timeout, concurrency limit and
on-disk cache, under the `reward.judge` endpoint knobs). A request that fails after the client's
retries scores `failure_score`, flagged `failed`; an answer whose rating cannot be parsed scores it
too, flagged `parse_failed`, and is not cached. Never raises.
"""

from __future__ import annotations

from typing import Sequence

from slca.config.groups.reward import JudgeConfig
from slca.http import EndpointError, HttpClient, chat_content
from slca.rewards.judges.base import LABEL_SCORES, JudgeRequest, JudgeResult, register_judge
from slca.rewards.judges.prompt import build_prompt, parse_rating


@register_judge("llm")
class LLMJudge:
    """Rates the final answer on the 5-label rubric via a chat endpoint; see module docstring."""

    name = "llm"

    def __init__(self, cfg: JudgeConfig) -> None:
        self.cfg = cfg
        self.client = HttpClient(cfg, "/chat/completions")
        self._fail = JudgeResult(cfg.failure_score, "judge_failed", failed=True)
        self._parse_fail = JudgeResult(cfg.failure_score, "parse_failed", parse_failed=True)

    def score(self, req: JudgeRequest) -> JudgeResult:
        body = {
            "model": self.cfg.model,
            "messages": [{"role": "user", "content": build_prompt(req, self.cfg.prompt_style)}],
            "temperature": self.cfg.temperature,
            "max_tokens": self.cfg.max_tokens,
        }
        rated = lambda text: parse_rating(text) is not None  # noqa: E731 - unparseable answers are not cached
        content = self.client.cached(body, chat_content, accept=rated)
        cached = content is not None
        if not cached:
            try:
                content = self.client.post(body, chat_content, accept=rated)
            except EndpointError:
                return self._fail
        label = parse_rating(content)
        if label is None:
            return self._parse_fail
        return JudgeResult(LABEL_SCORES[label], label, cached=cached)

    def score_batch(self, reqs: Sequence[JudgeRequest]) -> list[JudgeResult]:
        """Score many requests with at most `max_concurrency` in flight; identical requests are sent once."""
        unique: dict[JudgeRequest, int] = {}
        order = [unique.setdefault(r, len(unique)) for r in reqs]
        todo = list(unique)
        results = self.client.map(self.score, todo)
        return [results[i] for i in order]
