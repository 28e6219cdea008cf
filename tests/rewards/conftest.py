"""Builders for reward tests: ground truths and hermes responses."""

from __future__ import annotations

import json

import pytest

from slca.config.groups.reward import HierRReward, JudgeConfig

TOOLS = ["get_weather", "search", "convert"]


def gt(gold, allowed=TOOLS, **extra):
    return {"allowed_tools": list(allowed), "gold_tool_calls": gold, "question_content": "What is the weather in Paris?", **extra}


def block(*calls):
    """A <tool_call> block: one call object, or a JSON list for parallel calls."""
    body = calls[0] if len(calls) == 1 else list(calls)
    return f"<tool_call>\n{json.dumps(body)}\n</tool_call>"


def c(name, **args):
    return {"name": name, "arguments": args}


def resp(content):
    return f"user\n<tool_response>\n{content}\n</tool_response>\nassistant\n"


@pytest.fixture
def cfg_none():
    """HierR with the judge switched off (summary = failure score 0)."""
    return HierRReward(judge=JudgeConfig(name="none", cache_dir=None))
