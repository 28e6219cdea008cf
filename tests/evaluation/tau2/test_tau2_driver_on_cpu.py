"""τ² run in its own environment by slca's driver (docs/tau2.md#how-it-runs), all in one τ² process:

- scripted gold replay: a scripted agent and user replay each task's gold actions (the agent's and,
  in telecom, the user's own device actions) and score 1.0; without the last action they score 0.0;
- the LLM plumbing: τ²'s own LLM agent, user simulator and NL-assertion judge all reach one local
  scripted OpenAI-compatible server through litellm, each under the model name the job gave it;
- the `calculate` guard: the scripted agent asks for `9**9**9**9`, which τ²'s own tool would hang
  on; the guard refuses it and the refusal comes back to the agent as the tool's answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from slca.config.tau2 import Tau2Eval, Tau2Llm
from slca.evaluation.tau2.job import DATA_DIR, domain_metrics
from tests.conftest import serve_scripted

pytestmark = [pytest.mark.slow, pytest.mark.tau2]

RETAIL_TASKS = ["0", "1", "2", "3"]  # "2" and "3" also require the agent to tell the user a number
TELECOM_TASKS = 3  # the first three
NL_TASK = "106"  # a retail task with natural-language assertions (the judge is consulted) whose gold exchange succeeds
HANGING = "9**9**9**9"
# Tools that change the retail database or the telecom line and device: dropping one changes the final
# state τ² compares, so the negative control must fail. (Telecom's first three end with the agent's
# refuel_data and the user's own toggle_data and toggle_roaming.)
STATE_CHANGING = ("exchange_delivered_order_items", "return_delivered_order_items", "modify_pending_order_items",
                  "refuel_data", "toggle_data", "toggle_roaming")


def _tasks(domain: str) -> list[dict[str, Any]]:
    return json.loads((DATA_DIR / "tau2" / "domains" / domain / "tasks.json").read_text())


def _completion(model: str, message: dict[str, Any]) -> tuple[int, bytes, float]:
    reply = {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": model,
             "choices": [{"index": 0, "message": {"role": "assistant", **message},
                          "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
             "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    return 200, json.dumps(reply).encode(), 0.0


def _script(requests: list[dict[str, Any]]) -> Callable[[dict], tuple[int, bytes, float]]:
    """Replies by role (the request's model name): the agent calls calculate then answers, the user asks then stops."""

    def reply(body: dict) -> tuple[int, bytes, float]:
        model = body["model"]
        seen = sum(1 for r in requests if r["body"]["model"] == model)  # this request included
        if model == "agent":
            if seen == 1:
                call = {"id": "call_1", "type": "function", "function": {"name": "calculate", "arguments": json.dumps({"expression": HANGING})}}
                return _completion(model, {"content": None, "tool_calls": [call]})
            return _completion(model, {"content": "I could not compute that."})
        if model == "user":
            return _completion(model, {"content": "I want to exchange an item." if seen == 1 else "###STOP###"})
        verdict = {"results": [{"expectedOutcome": "scripted", "reasoning": "scripted judge", "metExpectation": False}]}
        return _completion(model, {"content": json.dumps(verdict)})

    return reply


@pytest.fixture(scope="module")
def driver_run(tau2_python: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], list[dict[str, Any]], float]:
    """Every job of this module in one τ² process: (results in job order, requests the scripted server saw, seconds)."""
    from slca.evaluation.tau2.job import job_spec, run_driver

    work = tmp_path_factory.mktemp("tau2-driver")
    gold_cfg = Tau2Eval(max_steps=100)
    with serve_scripted(lambda body: (500, b"{}", 0.0)) as endpoint:
        endpoint.default = _script(endpoint.requests)
        llm = dict(base_url=endpoint.url, api_key_env=None)
        llm_cfg = Tau2Eval(max_steps=20, nl_assertions=True, user=Tau2Llm(model="openai/user", temperature=0.0, **llm),
                           judge=Tau2Llm(model="openai/judge", **llm))
        jobs = [dict(cfg=gold_cfg, domain="retail", mode=m, seed=300, task_ids=RETAIL_TASKS) for m in ("gold", "gold_drop_last")]
        jobs += [dict(cfg=gold_cfg, domain="telecom", mode=m, seed=300, limit=TELECOM_TASKS) for m in ("gold", "gold_drop_last")]
        jobs.append(dict(cfg=llm_cfg, domain="retail", mode="llm", seed=7, task_ids=[NL_TASK], agent_url=endpoint.url,
                         served_name="agent", temperature=0.0))
        paths, outs = [], []
        for i, kwargs in enumerate(jobs):
            outs.append(work / f"out-{i}.json")
            paths.append(work / f"job-{i}.json")
            paths[-1].write_text(json.dumps(job_spec(out=outs[-1], **kwargs)))
        start = time.perf_counter()
        proc = run_driver(tau2_python, paths, timeout_s=300, workdir=work)
        seconds = time.perf_counter() - start
        requests = list(endpoint.requests)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(o.read_text()) for o in outs], requests, seconds


def test_the_chosen_tasks_end_with_a_state_changing_gold_action() -> None:
    """The negative control is meaningful only when the dropped action changes what τ² checks."""
    retail = {t["id"]: t for t in _tasks("retail")}
    for task in [retail[i] for i in [*RETAIL_TASKS, NL_TASK]] + _tasks("telecom")[:TELECOM_TASKS]:
        last = task["evaluation_criteria"]["actions"][-1]["name"]
        assert last in STATE_CHANGING, (task["id"], last)
    assert retail[NL_TASK]["evaluation_criteria"]["nl_assertions"]


def test_gold_replay_scores_one_and_dropping_the_last_action_scores_zero_in_retail_and_telecom(driver_run: Any) -> None:
    results, _, _ = driver_run
    telecom_ids = [t["id"] for t in _tasks("telecom")[:TELECOM_TASKS]]
    expected = [("retail", "gold", RETAIL_TASKS, 1.0), ("retail", "gold_drop_last", RETAIL_TASKS, 0.0),
                ("telecom", "gold", telecom_ids, 1.0), ("telecom", "gold_drop_last", telecom_ids, 0.0)]
    for result, (domain, mode, ids, reward) in zip(results, expected):
        assert (result["domain"], result["mode"], result["task_ids"]) == (domain, mode, ids)
        sims = result["simulations"]
        assert [s["task_id"] for s in sims] == ids
        assert all(s["error"] is None for s in sims), [s["error"] for s in sims]
        # Every conversation ended with the scripted user's stop, not at a cap.
        assert {s["termination"] for s in sims} == {"user_stop"}
        assert [s["reward"] for s in sims] == [reward] * len(ids), (domain, mode)
        assert domain_metrics(result, domain) == {f"{domain}/pass^1": reward, f"{domain}/errors": 0.0}


def test_the_agent_user_and_judge_all_reach_the_configured_endpoint_under_their_own_model_names(driver_run: Any) -> None:
    results, requests, _ = driver_run
    (sim,) = results[-1]["simulations"]
    assert sim["error"] is None and sim["termination"] == "user_stop"
    # The scripted agent changed nothing while the gold exchanges an item: τ²'s database check fails it.
    assert sim["reward"] == 0.0
    assert all(r["path"] == "/v1/chat/completions" for r in requests)
    by_model: dict[str, list[dict[str, Any]]] = {}
    for r in requests:
        by_model.setdefault(r["body"]["model"], []).append(r["body"])
    assert {m: len(b) for m, b in by_model.items()} == {"agent": 2, "user": 2, "judge": 1}
    agent_first = by_model["agent"][0]
    assert agent_first["messages"][0]["role"] == "system" and "<policy>" in agent_first["messages"][0]["content"]
    tools = {t["function"]["name"]: t["function"] for t in agent_first["tools"]}
    assert "calculate" in tools and list(tools["calculate"]["parameters"]["properties"]) == ["expression"]
    assert all(b["temperature"] == 0.0 for b in by_model["agent"] + by_model["user"] + by_model["judge"])
    # The judge saw the conversation, the agent's final answer included.
    assert "I could not compute that." in by_model["judge"][0]["messages"][-1]["content"]


def test_the_calculate_guard_refuses_a_tower_of_powers_and_the_agent_reads_the_refusal(driver_run: Any) -> None:
    _, requests, seconds = driver_run
    agent_second = [r["body"] for r in requests if r["body"]["model"] == "agent"][1]
    tool_messages = [m for m in agent_second["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 1
    assert "Pow is not allowed" in tool_messages[0]["content"]
    # Without the guard this expression never finishes; with it the whole module's run stays short.
    assert seconds < 240
