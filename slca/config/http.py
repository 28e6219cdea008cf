"""One typed set of knobs for every HTTP endpoint slca calls (the `openai` generator, the `llm`
judge, the `sgls` simulator): the same names, types and ranges everywhere, read by slca/http.py.

Each consumer subclasses `HttpEndpoint` and may give a knob another default with `knob(...)`,
which keeps the knob's type, range and description.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import Field

from slca.config.base import SlcaModel
from slca.config.limits import MAX_WALL_SECONDS, MAX_WORKERS


class HttpEndpoint(SlcaModel):
    """An OpenAI-compatible endpoint and how slca's one HTTP client talks to it."""

    base_url: str = Field("http://127.0.0.1:8000/v1", description="Endpoint base URL; the route (`/completions`, `/chat/completions`) is appended.")
    api_key_env: str | None = Field(None, description="Environment variable holding the API key; null or unset sends none (secrets only come from the environment).")
    timeout_s: float = Field(540.0, gt=0, le=MAX_WALL_SECONDS, description="Deadline in seconds of each attempt: connect, headers and the whole reply body together.")
    max_retries: int = Field(3, ge=0, le=100, description="Extra attempts on timeouts, transport errors, HTTP 408/409/429/5xx and unusable reply bodies.")
    retry_backoff_s: float = Field(1.0, ge=0.0, le=3600.0, description="Backoff unit: retry k sleeps k times this many seconds.")
    max_concurrency: int = Field(16, ge=1, le=MAX_WORKERS, description="Requests in flight at most, per client.")
    max_reply_bytes: int = Field(16 * 2**20, ge=1024, le=2**30, description="Largest reply body read, in bytes; a longer one fails the request at once, unretried.")
    cache_dir: str | None = Field(None, description="On-disk reply cache keyed by (route, request body); null disables it.")


def knob(name: str, default: Any) -> Any:
    """The `HttpEndpoint` field `name` with another default (same type, range and description)."""
    info = copy.copy(HttpEndpoint.model_fields[name])
    info.default = default
    return info
