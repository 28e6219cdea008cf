"""A real HTTP server on 127.0.0.1 playing an OpenAI-compatible endpoint with scripted replies."""

from __future__ import annotations

import json

import pytest

from tests.conftest import serve_scripted


def chat_reply(content: str) -> bytes:
    return json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}).encode()


@pytest.fixture
def endpoint():
    """A scripted OpenAI-compatible endpoint; unscripted calls get a default tool response."""
    with serve_scripted(lambda body: (200, chat_reply('<tool_response>{"default": true}</tool_response>'), 0.0)) as ep:
        ep.chat = chat_reply
        yield ep
