"""`sgls` simulator against a real local HTTP server: prompt, extraction, retries, timeout, cache."""

from __future__ import annotations

import json
import time

import pytest

from slca.config.groups.simulator import SglsSimulator as SglsCfg
from slca.sim import build_simulator
from slca.sim.sgls import build_prompt, extract_response
from tests.scaling import assert_linear

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather for a city — météo",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
CALL = {"name": "get_weather", "arguments": {"city": "Oslo"}}


def make(endpoint, tmp_path, **overrides):
    cfg = dict(base_url=endpoint.url, model="sim-model", timeout_s=2.0, max_retries=2, retry_backoff_s=0.01,
               cache_dir=str(tmp_path / "cache"), api_key_env="SLCA_TEST_SIM_KEY")
    cfg.update(overrides)
    return build_simulator(SglsCfg(**cfg), tool_schemas=TOOLS)


def test_prompt_structure():
    prompt = build_prompt(TOOLS[0], "get_weather", {"city": "Oslo"})
    assert prompt.index("API SERVER") < prompt.index("Tool Definition:") < prompt.index("Incoming Request:")
    assert prompt.count("<tool_call>[{") == 3  # three one-line examples
    assert json.dumps(TOOLS[0], indent=2, ensure_ascii=False) in prompt  # pretty, non-ASCII kept
    request = prompt.split("Incoming Request:\n<tool_call>\n", 1)[1].split("\n</tool_call>", 1)[0]
    assert json.loads(request) == [{"name": "get_weather", "parameters": {"city": "Oslo"}, "depend_on": []}]
    assert "<tool_response>" in prompt.rsplit("</tool_call>", 1)[1]


@pytest.mark.parametrize("reply, expected", [
    ('<tool_response>{"a": 1}</tool_response>', '{"a": 1}'),
    ('x <tool_response>1</tool_response> y <tool_response> {"b": 2} </tool_response> z', '{"b": 2}'),
    ('<tool_call>{"c": 3}</tool_call>', '{"c": 3}'),
    ('preamble <tool_response>{"d": 4}', '{"d": 4}'),
    ('<tool_response><tool_response>{"e": 5}</tool_response>', '{"e": 5}'),
    ('<think>plan</think>\n<tool_response>{"f": 6}</tool_response>', '{"f": 6}'),
    ('  {"g": 7}\n', '{"g": 7}'),
])
def test_extract_response(reply, expected):
    assert extract_response(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    ('<tool_call>{"x": 1}</tool_call><tool_response>{"y": 2}</tool_response>', '{"y": 2}'),  # a response beats a call
    ('<tool_response><tool_call>{"h": 8}</tool_call></tool_response>', '{"h": 8}'),  # unwrapped until nothing changes
    ('<think>a</think>\n<think>b</think> {"i": 9}', '{"i": 9}'),
    ('plan whose opening tag was eaten</think> <tool_response>{"j": 10}</tool_response>', '{"j": 10}'),
    ('<think>unclosed <tool_response>{"k": 11}</tool_response>', '{"k": 11}'),
    ('<tool_response>{"l": 12}</tool_response></tool_response>', '{"l": 12}'),
    ('<tool_response>1</tool_response> <tool_response>2', '1'),  # the last complete pair wins over a later opening
    ('<tool_response>\n  {"m": 13}\n</tool_response>\n<think>after</think>', '{"m": 13}'),
    ("no tags at all", "no tags at all"),
    ("", ""),
])
def test_ordinary_simulator_replies_are_unwrapped_as_documented(reply, expected):
    assert extract_response(reply) == expected


MB = 1_000_000


@pytest.mark.parametrize("reply, size, expected", [
    (lambda m: "<tool_response>" * m + '{"ok": 1}', MB // 15, '{"ok": 1}'),  # the quadratic case of the old regex
    (lambda m: "<think>" * m + '<tool_response>{"ok": 2}</tool_response>', MB // 7, '{"ok": 2}'),
    (lambda m: "<tool_response>" * m + '{"ok": 3}' + "</tool_response>" * m, MB // 30, '{"ok": 3}'),
    (lambda m: "<think><tool_call>" * m + '{"ok": 4}', MB // 18, '{"ok": 4}'),
], ids=["open-responses", "open-thinks", "nested-responses", "open-think-calls"])
def test_a_megabyte_simulator_reply_full_of_open_tags_is_unwrapped_in_linear_time(reply, size, expected):
    assert extract_response(reply(size)) == expected
    assert_linear(lambda m: extract_response(reply(m)), size // 8)


def test_canned_reply_and_request(endpoint, tmp_path, monkeypatch):
    monkeypatch.setenv("SLCA_TEST_SIM_KEY", "sk-secret")
    endpoint.script.append((200, endpoint.chat('<tool_response>{"temp": 4}</tool_response>'), 0.0))
    obs = make(endpoint, tmp_path, temperature=0.3, max_tokens=77).respond(CALL)
    assert (obs.kind, obs.text, obs.truncated) == ("ok", '{"temp": 4}', False)
    (req,) = endpoint.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Authorization"] == "Bearer sk-secret"
    body = req["body"]
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("sim-model", 0.3, 77)
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert body["messages"][0]["content"] == build_prompt(TOOLS[0], "get_weather", {"city": "Oslo"})


def test_no_key_no_auth_header(endpoint, tmp_path, monkeypatch):
    monkeypatch.delenv("SLCA_TEST_SIM_KEY", raising=False)
    make(endpoint, tmp_path).respond(CALL)
    assert "Authorization" not in endpoint.requests[0]["headers"]


def test_bad_calls_never_reach_the_endpoint(endpoint, tmp_path):
    s = make(endpoint, tmp_path)
    assert s.respond({"name": "nope", "arguments": {}}).text == \
        "Tool 'nope' not found in the current available tools set."
    assert s.respond({"name": "get_weather", "arguments": {}}).text == \
        "Tool 'get_weather' missing required parameters: ['city']"
    assert s.respond({"name": "get_weather", "arguments": "{oops"}).text.startswith(
        "Error: Invalid tool arguments format")
    assert endpoint.requests == []


def test_server_errors_and_garbage_are_retried(endpoint, tmp_path):
    endpoint.script += [(500, b"boom", 0.0), (200, b"<html>not json</html>", 0.0),
                        (200, endpoint.chat('<tool_response>{"ok": 1}</tool_response>'), 0.0)]
    obs = make(endpoint, tmp_path).respond(CALL)
    assert (obs.kind, obs.text) == ("ok", '{"ok": 1}')
    assert len(endpoint.requests) == 3


def test_failure_after_retries_is_an_error_observation(endpoint, tmp_path):
    endpoint.script += [(500, b"boom", 0.0)] * 2 + [(200, b'{"choices": []}', 0.0)]
    obs = make(endpoint, tmp_path).respond(CALL)
    assert obs.kind == "error" and obs.text.startswith("Error when executing tool: ")
    assert len(endpoint.requests) == 3
    # failures are not cached: the next call asks again and succeeds
    assert make(endpoint, tmp_path).respond(CALL).kind == "ok" and len(endpoint.requests) == 4


def test_slow_server_times_out(endpoint, tmp_path):
    endpoint.script += [(200, endpoint.chat("<tool_response>late</tool_response>"), 1.5)] * 2
    start = time.monotonic()
    obs = make(endpoint, tmp_path, timeout_s=0.2, max_retries=1).respond(CALL)
    assert obs.kind == "error" and "time" in obs.text.lower()
    assert time.monotonic() - start < 1.4 and len(endpoint.requests) == 2


def test_unreachable_endpoint_is_an_error_observation(tmp_path):
    cfg = SglsCfg(base_url="http://127.0.0.1:9/v1", max_retries=1, retry_backoff_s=0.0, timeout_s=1.0,
                  cache_dir=None)
    obs = build_simulator(cfg, tool_schemas=TOOLS).respond(CALL)
    assert obs.kind == "error" and obs.text.startswith("Error when executing tool: ")


def test_disk_cache(endpoint, tmp_path):
    endpoint.script.append((200, endpoint.chat('<tool_response>{"temp": 9}</tool_response>'), 0.0))
    first = make(endpoint, tmp_path).respond(CALL)
    again = make(endpoint, tmp_path).respond(CALL)  # a fresh instance reads the same cache
    assert first == again and len(endpoint.requests) == 1
    files = list((tmp_path / "cache").rglob("*"))
    assert [f.name for f in files if f.is_file()] == [make(endpoint, tmp_path).cache_key(
        build_prompt(TOOLS[0], "get_weather", {"city": "Oslo"})) + ".json"]
    make(endpoint, tmp_path, model="other-model").respond(CALL)  # model is part of the key
    assert len(endpoint.requests) == 2
    uncached = make(endpoint, tmp_path, cache_dir=None)
    uncached.respond(CALL)
    uncached.respond(CALL)
    assert len(endpoint.requests) == 4


def test_respond_many_is_concurrent_and_sends_identical_calls_once(endpoint, tmp_path):
    endpoint.script += [(200, endpoint.chat("<tool_response>slow</tool_response>"), 0.5)] * 2
    calls = [CALL, {"name": "get_weather", "arguments": {"city": "Rome"}}, {"name": "x", "arguments": {}},
             {"name": "get_weather", "arguments": '{"city": "Oslo"}'}]
    start = time.monotonic()
    obs = make(endpoint, tmp_path, cache_dir=None).respond_many(calls)
    elapsed = time.monotonic() - start
    assert [o.kind for o in obs] == ["ok", "ok", "error", "ok"]
    assert obs[0].text == obs[3].text == "slow"
    assert len(endpoint.requests) == 2 and elapsed < 0.95


def test_long_reply_is_truncated(endpoint, tmp_path):
    endpoint.script.append((200, endpoint.chat("<tool_response>" + "a" * 50 + "b" * 50 + "</tool_response>"), 0.0))
    obs = make(endpoint, tmp_path, max_response_chars=20).respond(CALL)
    assert obs.truncated and obs.n_chars == 100 and obs.text == "a" * 10 + "...(truncated)..." + "b" * 10
