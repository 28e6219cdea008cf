"""The parts of the tau2 benchmark that need no τ² environment: the `calculate` guard, pass^k, the
driver's job, and the policy server (a real tokenizer and the `openai` generator at a scripted
completions endpoint)."""

from __future__ import annotations

import ast
import itertools
import json
import math
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slca.config.compose import compose_spec
from slca.config.tau2 import Tau2Eval, Tau2Llm
from slca.evaluation.tau2.driver import check_expression
from slca.evaluation.tau2.job import Tau2Error, domain_metrics, job_spec, pass_hat_k
from slca.evaluation.tau2.server import PolicyServer, Protocol, serve_policy
from slca.rollout.config import RolloutConfig
from slca.rollout.generators import get_generator
from tests.conftest import serve_scripted
from tests.evaluation.tiny_policy import save_tiny_policy

# ----------------------------------------------------------------------------- calculate guard

ACCEPTED = ["2 + 2", "(1.5 * 3) / 2", "-3", "+4 - -2", "100.25*0.9", "((1))", " 7 "]
REJECTED = ["2**3", "2 ** 3", "9**9**9**9", "(2)**(3)", "8 // 3", "...", "()", "(1)(2)", "1,2", "", "   ", "2 +", "1 if 1 else 2",
            "__import__('os')", "a", "1 << 3", "'1'", "True", "1" * 1001, "(" * 500 + "1" + ")" * 500]


@pytest.mark.parametrize("expression", ACCEPTED)
def test_plain_arithmetic_passes_the_calculate_guard(expression: str) -> None:
    check_expression(expression)


@pytest.mark.parametrize("expression", REJECTED)
def test_anything_but_plain_arithmetic_is_refused_by_the_calculate_guard(expression: str) -> None:
    with pytest.raises(ValueError):
        check_expression(expression)


def test_a_non_string_expression_is_refused_by_the_calculate_guard() -> None:
    with pytest.raises(ValueError, match="must be a string"):
        check_expression(12)


numbers = st.one_of(st.integers(0, 10**6).map(str), st.floats(0, 1e6, allow_nan=False).map(lambda f: f"{f:.3f}"))
expressions = st.recursive(numbers, lambda inner: st.one_of(
    st.tuples(inner, st.sampled_from(["+", "-", "*", "/"]), inner).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
    inner.map(lambda e: f"({e})"), inner.map(lambda e: f"-{e}")), max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(expressions, expressions)
def test_arithmetic_passes_and_the_same_with_a_power_inside_is_refused(left: str, right: str) -> None:
    # Python's own evaluator is the oracle that `left` is arithmetic it can finish.
    try:
        eval(compile(ast.parse(left, mode="eval"), "<oracle>", "eval"), {"__builtins__": {}})  # noqa: S307 (test oracle on generated arithmetic)
    except ZeroDivisionError:
        pass
    check_expression(left)
    with pytest.raises(ValueError, match="Pow is not allowed"):
        check_expression(f"({left}) ** ({right})")


# ----------------------------------------------------------------------------- pass^k


def _brute_pass_k(outcomes: tuple[bool, ...], k: int) -> float:
    """Share of the k-subsets of one task's trials in which every trial succeeded."""
    subsets = list(itertools.combinations(outcomes, k))
    return sum(all(s) for s in subsets) / len(subsets)


@settings(max_examples=250, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=8), st.data())
def test_pass_hat_k_equals_the_share_of_all_successful_k_subsets_of_trials(outcomes: list[bool], data: Any) -> None:
    k = data.draw(st.integers(1, len(outcomes)))
    assert math.isclose(pass_hat_k(sum(outcomes), len(outcomes), k), _brute_pass_k(tuple(outcomes), k))


def test_domain_metrics_average_pass_hat_k_over_tasks_and_count_errors() -> None:
    sims = [{"task_id": "a", "reward": 1.0, "error": None}] * 3
    sims += [{"task_id": "b", "reward": r, "error": e} for r, e in ((1.0, None), (0.0, "ValueError: x"), (0.3, None))]
    metrics = domain_metrics({"trials": 3, "task_ids": ["a", "b"], "simulations": sims}, "retail")
    assert metrics == pytest.approx({"retail/pass^1": (1 + 1 / 3) / 2, "retail/pass^2": 0.5, "retail/pass^3": 0.5, "retail/errors": 1 / 6})


def test_domain_metrics_refuse_a_result_missing_some_trials() -> None:
    sims = [{"task_id": "a", "reward": 1.0, "error": None}]
    with pytest.raises(Tau2Error, match="expected 2 trials"):
        domain_metrics({"trials": 2, "task_ids": ["a"], "simulations": sims}, "retail")


# ----------------------------------------------------------------------------- the driver's job


def test_the_job_carries_every_tau2_knob_and_points_the_agent_at_the_served_policy(tmp_path: Path) -> None:
    cfg = compose_spec(["eval.tau2.trials=3", "eval.tau2.max_steps=50", "eval.tau2.max_errors=4", "eval.tau2.max_concurrency=2",
                        "eval.tau2.user.model=openai/Qwen3-32B", "eval.tau2.user.base_url=http://node:8001/v1",
                        "eval.tau2.user.temperature=0.5", "eval.tau2.nl_assertions=true", "eval.tau2.judge.api_key_env=null"]).eval.tau2
    job = job_spec(cfg, domain="telecom", mode="llm", seed=5, out=tmp_path / "o.json", agent_url="http://127.0.0.1:1234/v1",
                   served_name="slca-policy", temperature=0.7, limit=9)
    assert (job["trials"], job["max_steps"], job["max_errors"], job["max_concurrency"], job["limit"]) == (3, 50, 4, 2, 9)
    assert job["agent"] == {"model": "openai/slca-policy", "base_url": "http://127.0.0.1:1234/v1", "api_key_env": None,
                            "temperature": 0.7, "max_tokens": None}
    assert job["user"] == {"model": "openai/Qwen3-32B", "base_url": "http://node:8001/v1", "api_key_env": "OPENAI_API_KEY",
                           "temperature": 0.5, "max_tokens": None}
    assert job["judge"]["model"] == "openai/gpt-4o-mini" and job["judge"]["api_key_env"] is None
    # Without nl_assertions τ² scores as its leaderboard does and never calls a judge.
    assert job_spec(Tau2Eval(), domain="retail", mode="gold", seed=0, out=tmp_path / "o.json")["judge"] is None
    with pytest.raises(ValueError, match="mode must be one of"):
        job_spec(Tau2Eval(), domain="retail", mode="replay", seed=0, out=tmp_path / "o.json")


def test_a_tau2_llm_needs_a_model_name() -> None:
    with pytest.raises(ValueError):
        Tau2Llm(model="")


# ----------------------------------------------------------------------------- the policy server

CORPUS = ['<|im_start|>system\nYou are an agent.<|im_end|>\n<|im_start|>user\nAdd 2 and 2.<|im_end|>\n<|im_start|>assistant\n'
          '<tool_call>\n{"name": "calculate", "arguments": {"expression": "2 + 2"}}\n</tool_call><|im_end|>\n'] * 10
TOOLS = [{"type": "function", "function": {"name": "calculate", "description": "Calculate an expression.",
                                           "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                                                          "required": ["expression"]}}}]
CALL_TEXT = '<tool_call>\n{"name": "calculate", "arguments": {"expression": "2 + 2"}}\n</tool_call><|im_end|>'


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(save_tiny_policy(tmp_path_factory.mktemp("policy"), CORPUS), local_files_only=True)


def _post(url: str, body: Any, route: str = "/chat/completions") -> tuple[int, dict[str, Any]]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url + route, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _completions(text: str):
    def reply(body: dict) -> tuple[int, bytes, float]:
        return 200, json.dumps({"choices": [{"text": text, "finish_reason": "stop", "stop_reason": None}]}).encode(), 0.0

    return reply


def _serve(tokenizer: Any, upstream: str, **caps: Any):
    from slca.config.groups.eval import EvalEndpoint

    generator = get_generator("openai")(endpoint=EvalEndpoint(base_url=upstream, max_retries=0), model="upstream", tokenizer=tokenizer)
    policy = PolicyServer(generator, tokenizer, RolloutConfig(temperature=0.0, **caps), Protocol("native", "keep", "dataset", 0), "slca-policy")
    return serve_policy(policy)


def test_a_prompt_over_the_cap_and_the_tokenizers_own_limit_is_refused_without_the_librarys_warning(tokenizer: Any, caplog) -> None:
    import copy

    limited = copy.deepcopy(tokenizer)
    limited.model_max_length, limited.deprecation_warnings = 16, {}  # transformers warns once per tokenizer
    with serve_scripted(_completions("Fine.<|im_end|>")) as upstream, _serve(limited, upstream.url, max_prompt_length=32) as url:
        status, reply = _post(url, {"messages": [{"role": "user", "content": "x " * 200}]})
    assert status == 400 and "exceeds eval.rollout.max_prompt_length=32" in reply["error"]["message"]
    assert "longer than the specified maximum sequence length" not in caplog.text
    limited.encode("x " * 200)  # the control: the plain call does warn and is heard here
    assert "longer than the specified maximum sequence length" in caplog.text


def test_the_policy_server_returns_the_policys_hermes_calls_as_openai_tool_calls(tokenizer: Any) -> None:
    with serve_scripted(_completions(CALL_TEXT)) as upstream, _serve(tokenizer, upstream.url) as url:
        messages = [{"role": "system", "content": "<policy>Be kind.</policy>"}, {"role": "user", "content": "Add 2 and 2."},
                    {"role": "assistant", "content": None, "tool_calls": [
                        {"id": "c0", "type": "function", "function": {"name": "calculate", "arguments": '{"expression": "1 + 1"}'}}]},
                    {"role": "tool", "tool_call_id": "c0", "content": "2.0"}]
        status, reply = _post(url, {"model": "slca-policy", "messages": messages, "tools": TOOLS, "temperature": 0})
        prompt = upstream.requests[0]["body"]["prompt"]
    assert status == 200
    (choice,) = reply["choices"]
    assert choice["finish_reason"] == "tool_calls"
    (call,) = choice["message"]["tool_calls"]
    assert call["type"] == "function" and call["function"]["name"] == "calculate"
    assert json.loads(call["function"]["arguments"]) == {"expression": "2 + 2"}
    assert choice["message"]["content"] is None
    # The prompt is the policy's own chat template over τ²'s messages: system text, the tool schema,
    # the earlier call (its arguments decoded) and the tool's answer, then the assistant's turn.
    assert "<policy>Be kind.</policy>" in prompt and '"calculate"' in prompt and '"1 + 1"' in prompt and "2.0" in prompt
    assert prompt.endswith("<|im_start|>assistant\n")
    assert reply["usage"]["prompt_tokens"] == len(tokenizer.encode(prompt, add_special_tokens=False))


def test_a_turn_without_a_well_formed_call_comes_back_as_text_without_thinking(tokenizer: Any) -> None:
    text = '<think>hmm</think>Your order is on its way. <tool_call>{"name": broken}</tool_call><|im_end|>'
    with serve_scripted(_completions(text)) as upstream, _serve(tokenizer, upstream.url) as url:
        status, reply = _post(url, {"messages": [{"role": "user", "content": "Where is my order?"}]})
    assert status == 200
    message = reply["choices"][0]["message"]
    assert "tool_calls" not in message and reply["choices"][0]["finish_reason"] == "stop"
    assert message["content"].startswith("Your order is on its way.") and "<think>" not in message["content"]


@pytest.mark.parametrize(("body", "route", "status", "mention"), [
    ({"messages": [{"role": "user", "content": "x" * 400}]}, "/chat/completions", 400, "eval.rollout.max_prompt_length=64"),
    ({"messages": []}, "/chat/completions", 400, "messages must be a non-empty list"),
    ({"messages": [{"role": "robot", "content": "hi"}]}, "/chat/completions", 400, "messages[0]: needs a role"),
    ({"messages": [{"role": "user", "content": [{"type": "image"}]}]}, "/chat/completions", 400, "only text content"),
    ({"messages": [{"role": "user", "content": "hi"}], "tools": "calculate"}, "/chat/completions", 400, "tools must be a list"),
    (b"{not json", "/chat/completions", 400, "Expecting property name"),
    (b"[1, 2]", "/chat/completions", 400, "must be a JSON object"),
    ({"prompt": "hi"}, "/completions", 404, "answers /v1/chat/completions"),
])
def test_the_policy_server_refuses_a_bad_request_with_one_message_and_keeps_serving(
    tokenizer: Any, body: Any, route: str, status: int, mention: str,
) -> None:
    with serve_scripted(_completions("Fine.<|im_end|>")) as upstream, _serve(tokenizer, upstream.url, max_prompt_length=64) as url:
        got, reply = _post(url, body, route)
        assert (got, mention in reply["error"]["message"]) == (status, True), reply
        assert not upstream.requests  # nothing was generated for a refused request
        ok, _ = _post(url, {"messages": [{"role": "user", "content": "hi"}]})
    assert ok == 200
