"""ACEBench's user simulator through slca's HTTP client: ACEBench's own user prompt and greeting, its
roles, and a whole agent_multi_turn episode against a local OpenAI-compatible server that plays the
user (docs/eval.md#acebenchs-agent-categories)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from slca.config.acebench import AceBenchUser
from slca.evaluation.acebench.agent_data import load_agent_category
from slca.evaluation.acebench.agent_loop import run_episode
from slca.evaluation.acebench.agent_score import score_episode
from slca.evaluation.acebench.user_sim import PROMPTS_FILE, UserSimulator, system_prompt

USER_LINES = ["Please send Frank a lunch invitation, deleting the oldest message if the inbox is full.", "finish conversation"]


class _User(BaseHTTPRequestHandler):
    """Answers the k-th chat request of a conversation with USER_LINES[k], and records each request."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests.append((self.path, dict(self.headers), body))
        turn = sum(m["role"] == "system" for m in body["messages"]) - 1  # the simulator's own earlier lines
        reply = json.dumps({"choices": [{"message": {"content": USER_LINES[turn]}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _User)
    srv.daemon_threads, srv.lock, srv.requests = True, threading.Lock(), []
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_the_user_prompt_is_acebenchs_own_text_with_the_entrys_instructions() -> None:
    phone, travel = (next(e for e in load_agent_category("agent_multi_turn") if cls in e.involved_classes)
                     for cls in ("BaseApi", "Travel"))
    source = PROMPTS_FILE.read_text(encoding="utf-8")
    for entry, name in ((phone, "SYSTEM_PROMPT_BASE_EN"), (travel, "SYSTEM_PROMPT_TRAVEL_EN")):
        start = source.index(f'{name} = """') + len(name) + 6
        assert system_prompt(entry) == source[start:source.index('"""', start)].replace("{instruction}", entry.question)
    assert '"content": "Is there anything you need help with today?"' in source


def test_a_multi_turn_episode_runs_against_an_llm_user_behind_an_openai_compatible_endpoint(server, monkeypatch) -> None:
    monkeypatch.setenv("SLCA_ACEBENCH_USER_API_KEY", "k-test")
    entry = load_agent_category("agent_multi_turn")[0]
    cfg = AceBenchUser(base_url=f"http://127.0.0.1:{server.server_port}/v1", model="user-model")
    path = list(entry.milestones[0])
    lines = iter([*path, "agent: Sent."])
    episode, history = run_episode(entry, lambda h: next(lines), UserSimulator(cfg, entry))
    assert score_episode(entry, episode).correct
    assert [m.text for m in history if m.sender == "user"] == USER_LINES
    assert len(server.requests) == 2
    route, headers, last = server.requests[-1]
    assert route == "/v1/chat/completions" and headers["Authorization"] == "Bearer k-test"
    assert (last["model"], last["temperature"], last["max_tokens"]) == ("user-model", 0.001, 1000)
    assert [m["role"] for m in last["messages"]] == ["system", "user", "system", "user"]
    assert last["messages"][0]["content"] == system_prompt(entry)
    assert last["messages"][1]["content"] == "Is there anything you need help with today?"
    # The agent's message reaches the user without ACEBench's role prefix.
    assert last["messages"][-1]["content"] == " Sent."
