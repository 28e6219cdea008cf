"""The `llm` judge against a real HTTP server on 127.0.0.1 with scripted replies."""

from __future__ import annotations

import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from slca.config.groups.reward import HierRReward, JudgeConfig
from slca.rewards import compute_score_batch
from slca.rewards.judges import JudgeRequest
from slca.rewards.judges.llm import LLMJudge

from .conftest import block, c, gt, resp

GOOD = "<response><response_quality><reasoning>ok</reasoning><rating>good</rating></response_quality></response>"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass

    def _reply(self, code, payload):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out first (the `slow` case)

    def do_POST(self):
        srv = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        parts = self.path.strip("/").split("/")
        case, key = parts[0], "/".join(parts[:2])
        with srv.lock:
            srv.hits[key] = n = srv.hits.get(key, 0) + 1
            srv.inflight[key] = srv.inflight.get(key, 0) + 1
            srv.max_inflight[key] = max(srv.max_inflight.get(key, 0), srv.inflight[key])
            srv.last[key] = (body, self.headers.get("Authorization"))
        ok = {"choices": [{"message": {"role": "assistant", "content": GOOD}}]}
        if case == "ok":
            reply = (200, ok)
        elif case == "flaky":
            reply = (500, {"error": "busy"}) if n <= 2 else (200, ok)
        elif case == "down":
            reply = (503, {"error": "down"})
        elif case == "garbage":
            reply = (200, {"choices": [{"message": {"content": "I would say it is good."}}]})
        elif case == "notjson":
            reply = (200, b"<html>oops")
        elif case == "nochoices":
            reply = (200, {"choices": []})
        elif case == "badrequest":
            reply = (400, {"error": "bad"})
        elif case == "slow":
            time.sleep(1.0)
            reply = (200, ok)
        else:  # busy
            time.sleep(0.05)
            reply = (200, ok)
        # leave the in-flight count before replying: the client may start its next request as
        # soon as it has read this reply
        with srv.lock:
            srv.inflight[key] -= 1
        self._reply(*reply)


@pytest.fixture(scope="module")
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    srv.lock = threading.Lock()
    srv.hits, srv.max_inflight, srv.last, srv.inflight = {}, {}, {}, {}
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


_ids = itertools.count()


def judge_for(server, case, **kw):
    """A fresh judge on a fresh URL prefix (so hit counters are per test)."""
    key = f"{case}/{next(_ids)}"
    base = {"cache_dir": None, "retry_backoff_s": 0.01, "timeout_s": 5.0}
    cfg = JudgeConfig(name="llm", base_url=f"http://127.0.0.1:{server.server_port}/{key}/v1", **{**base, **kw})
    return LLMJudge(cfg), key


REQ = JudgeRequest("What is the weather?", "[Tool Response 1]\nsunny", "It is sunny today.")


def test_success_and_request_shape(server, monkeypatch):
    monkeypatch.setenv("SLCA_JUDGE_API_KEY", "sk-test")
    judge, key = judge_for(server, "ok", model="judge-m", temperature=0.0, max_tokens=77)
    res = judge.score(REQ)
    assert (res.score, res.rating, res.failed, res.parse_failed) == (0.75, "good", False, False)
    body, auth = server.last[key]
    assert body["model"] == "judge-m" and body["max_tokens"] == 77 and body["temperature"] == 0.0
    assert body["messages"][0]["role"] == "user" and "It is sunny today." in body["messages"][0]["content"]
    assert auth == "Bearer sk-test" and server.hits[key] == 1


def test_retries_on_5xx_then_succeeds(server):
    judge, key = judge_for(server, "flaky", max_retries=3)
    assert judge.score(REQ).score == 0.75
    assert server.hits[key] == 3


def test_gives_up_after_bounded_retries(server):
    judge, key = judge_for(server, "down", max_retries=2, failure_score=0.1)
    res = judge.score(REQ)
    assert res.failed and res.score == 0.1 and server.hits[key] == 3


def test_a_client_error_fails_at_once(server):
    judge, key = judge_for(server, "badrequest", max_retries=3)
    res = judge.score(REQ)
    assert res.failed and not res.parse_failed and server.hits[key] == 1


@pytest.mark.parametrize("case", ["nochoices", "notjson"])
def test_an_unusable_reply_body_is_retried_like_a_server_error(server, case):
    judge, key = judge_for(server, case, max_retries=2)
    res = judge.score(REQ)
    assert res.failed and not res.parse_failed and server.hits[key] == 3


def test_unparseable_rating(server):
    judge, key = judge_for(server, "garbage")
    res = judge.score(REQ)
    assert res.parse_failed and not res.failed and res.score == 0.0


def test_timeout(server):
    judge, key = judge_for(server, "slow", max_retries=0)
    judge.cfg.timeout_s = 0.2
    t0 = time.perf_counter()
    res = judge.score(REQ)
    assert res.failed and time.perf_counter() - t0 < 0.9


def test_connection_refused_is_a_failure_not_an_exception():
    cfg = JudgeConfig(name="llm", base_url="http://127.0.0.1:9/v1", cache_dir=None, max_retries=1, retry_backoff_s=0.0, timeout_s=1.0)
    assert LLMJudge(cfg).score(REQ).failed


def test_disk_cache_hits_and_atomic_files(server, tmp_path):
    judge, key = judge_for(server, "ok")
    cfg = judge.cfg.model_copy(update={"cache_dir": str(tmp_path)})
    first = LLMJudge(cfg).score(REQ)
    second = LLMJudge(cfg).score(REQ)  # a new judge: only the disk can answer
    assert first.score == second.score == 0.75 and not first.cached and second.cached
    assert server.hits[key] == 1
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) == 1 and files[0].suffix == ".json" and not files[0].name.startswith(".tmp")
    other = JudgeRequest("Another question?", REQ.tool_responses, REQ.final_response)
    LLMJudge(cfg).score(other)
    assert server.hits[key] == 2


def test_failures_are_not_cached(server, tmp_path):
    judge, key = judge_for(server, "garbage", cache_dir=str(tmp_path))
    judge.score(REQ)
    judge.score(REQ)
    assert server.hits[key] == 2 and not any(p.is_file() for p in tmp_path.rglob("*"))


def test_batch_concurrency_limit_and_dedup(server):
    judge, key = judge_for(server, "busy", max_concurrency=2)
    reqs = [JudgeRequest(f"q{i}", "[Tool Response 1]\nr", "A fine answer.") for i in range(6)]
    results = judge.score_batch(reqs + reqs[:3])
    assert [r.score for r in results] == [0.75] * 9
    assert server.hits[key] == 6
    assert 1 <= server.max_inflight[key] <= 2


def test_reward_rows_flag_judge_failures(server):
    judge, key = judge_for(server, "down", max_retries=0, failure_score=0.0)
    cfg = HierRReward(judge=judge.cfg)
    text = block(c("get_weather", city="Paris")) + resp('{"t": 21}') + "It is 21 degrees in Paris."
    rows = compute_score_batch(["d"], [text], [gt([c("get_weather", city="Paris")])], [None], reward_config=cfg)
    assert rows[0]["judge_failed"] == 1 and rows[0]["summary_score"] == 0.0
    judge2, _ = judge_for(server, "garbage")
    rows = compute_score_batch(["d"], [text], [gt([c("get_weather", city="Paris")])], None, reward_config=HierRReward(judge=judge2.cfg))
    assert rows[0]["judge_parse_failed"] == 1 and rows[0]["judge_failed"] == 0


def test_question_falls_back_to_extra_info_and_interactions_prompt(server):
    judge, key = judge_for(server, "ok", prompt_style="interactions", require_tool_response=False)
    ground = gt([c("get_weather", city="Paris")])
    del ground["question_content"]
    text = block(c("get_weather", city="Paris")) + "It should be sunny in Paris today."
    rows = compute_score_batch(["d"], [text], [ground], [{"question": "Q-from-extra-info"}], reward_config=HierRReward(judge=judge.cfg))
    prompt = server.last[key][0]["messages"][0]["content"]
    assert "Q-from-extra-info" in prompt and "## Tool Interactions" in prompt and '"get_weather"' in prompt
    assert rows[0]["no_tool_response"] == 1 and rows[0]["summary_score"] == 0.75
