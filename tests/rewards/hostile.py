"""Hostile model outputs and ground truths, as hypothesis strategies and as a seeded generator
(the fuzz count in tests/rewards/test_safety_net.py and benchmarks/reward_fuzz.py).

Each piece is a kind of malformed output seen or feared in practice: Python-literal dicts with
keys of mixed or unhashable types, sets, bytes literals, numbers past float range or past the
int-to-string limit, deep nesting, lone surrogates, NaN/Infinity in JSON, unbalanced or nested
tags, giant strings.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from hypothesis import strategies as st

TOOLS = ["f", "get_weather", "search"]
BIG_INT = "1" + "0" * 10_000  # 10**10000 written out: past Python's int-to-string limit
MID_INT = "9" * 4_000  # under the limit: parses, but no float can hold it

# Argument values in the syntax of each parser.
PY_VALUES = [
    "{1: 2, None: 3}", "{True: 1, 'x': 2}", "{1.5: 'a', 'b': 2, None: None}", "{(1, 2): 3}", "{{1: 2}: 3}", "{[1]: 2}",
    "{1, 2}", "set()", "frozenset({1})", "b'bytes'", "1e400", "-1e400", BIG_INT, MID_INT, "float('nan')", "1j",
    "'\ud800'", "'\udfff tail'", "'\\ud800'", "[" * 40 + "]" * 40, "{'a': " * 40 + "1" + "}" * 40, "...", "None", "x",
    "lambda: 1", "__import__('os')", "[1, 2, 3][0]", "'a' * 10", "{**{'a': 1}}", "-'a'", "+True",
]
JSON_VALUES = [
    "NaN", "Infinity", "-Infinity", "1e400", "-1e400", BIG_INT, MID_INT, '"\\ud800"', '"\\udfff x"', '"\ud800"',
    "[" * 40 + "]" * 40, '{"a": ' * 40 + "1" + "}" * 40, '{"1": 2, "null": 3}', "[1, {\"a\": NaN}]", "null", "true",
    '"\\u0000"', '"' + "x" * 5000 + '"', "{", "]", '"unterminated',
]
FRAGMENTS = [
    "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>", "<thinking>",
    "</thinking>", "<tool_call><tool_call>", "</tool_call></tool_call>", "\ud800", "\udfff", "\x00", "\u202e",
    "assistant", "```python\n", "```", "[", "]", "{", "}", "(", ")", "\n",
]


def hermes_call(name: str, value: str, key: str = "a") -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {{"{key}": {value}}}}}\n</tool_call>'


def pythonic_call(name: str, value: str, key: str = "a") -> str:
    return f"[{name}({key}={value})]"


def gold(name: str = "f", args: object = None) -> dict:
    call = {"name": name, "arguments": {"a": 1} if args is None else args}
    return {"allowed_tools": TOOLS, "gold_tool_calls": [call], "question_content": "What is f of 1?"}


HOSTILE_GOLD_ARGS = [
    {"a": float("nan")}, {"a": float("inf")}, {"a": 10**5000}, {"a": "\ud800"}, {"a": {"b": {"c": [[[[1]]]]}}},
    {"a": [1, {"b": None}]}, {"a": True}, {"a": 1.0}, {}, {"a": "x" * 10_000},
]
HOSTILE_GROUND_TRUTHS = [
    gold(), gold("search", {"a": "q"}), *(gold("f", a) for a in HOSTILE_GOLD_ARGS),
    {"allowed_tools": TOOLS, "gold_tool_calls": json.dumps([{"name": "f", "arguments": {"a": 1}}])[:-3]},  # truncated JSON
    {"allowed_tools": TOOLS, "gold_tool_calls": "[" * 5000 + "]" * 5000},
    {"allowed_tools": TOOLS, "gold_tool_calls": [[{"name": "f", "arguments": '{"a": NaN}'}], "f", 7, None]},
    {"allowed_tools": "not json", "gold_tool_calls": []},
    {"gold_tool_calls": [{"name": "f"}]}, None, "ground truth", 12, [],
]

# just under the default max_response_chars: parsed in full
GIANT_WITH_CALL = "y" * 150_000 + hermes_call("f", "1") + "\ud800" * 1000

# ------------------------------------------------------------------------- hypothesis strategies

_name = st.sampled_from(TOOLS + ["", "nope", "a.b", "\ud800"])
_py_call = st.builds(pythonic_call, _name, st.sampled_from(PY_VALUES))
_json_call = st.builds(hermes_call, _name, st.sampled_from(JSON_VALUES))
_text = st.text(max_size=40)  # includes lone surrogates
_piece = st.one_of(st.sampled_from(FRAGMENTS), _text, _json_call, _py_call, _text.map(lambda t: f"<tool_response>\n{t}\n</tool_response>"))

HOSTILE_OUTPUTS = st.one_of(
    _json_call,
    _py_call,
    st.lists(_piece, max_size=8).map("".join),
    st.lists(_py_call.map(lambda c: c[1:-1]), min_size=1, max_size=3).map(lambda cs: "[" + ", ".join(cs) + "]"),
    st.integers(1, 60).map(lambda d: "<tool_call>" + '{"name": "f", "arguments": {"a": ' + "[" * d * 100 + "</tool_call>"),
    st.sampled_from(["<tool_call>" * 5000, "[" * 100_000, "(" * 10_000, "x" * 200_001, "<think>" * 10_000 + "x", GIANT_WITH_CALL]),
    st.builds(lambda s: "<think>" + s + "</think>" + hermes_call("f", "1"), _text),
)
HOSTILE_GROUND_TRUTH = st.sampled_from(HOSTILE_GROUND_TRUTHS)
HOSTILE_EXTRA_INFO = st.one_of(st.none(), st.sampled_from([{"input": "\ud800?"}, {"gold_answer": 1}, [], "x", {"question": None}]))

# ------------------------------------------------------------------------- seeded generator


def hostile_output(rng: random.Random) -> str:
    """One hostile output drawn from the same pieces as HOSTILE_OUTPUTS (for counted fuzzing)."""
    kind = rng.randrange(6)
    if kind == 0:
        return hermes_call(rng.choice(TOOLS), rng.choice(JSON_VALUES))
    if kind == 1:
        return pythonic_call(rng.choice(TOOLS), rng.choice(PY_VALUES))
    if kind == 2:
        calls = [pythonic_call(rng.choice(TOOLS), rng.choice(PY_VALUES), rng.choice("ab"))[1:-1] for _ in range(rng.randint(1, 3))]
        return "[" + ", ".join(calls) + "]"
    if kind == 3:
        return "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 30)))
    if kind == 4:
        return "".join(
            rng.choice([hermes_call("f", rng.choice(JSON_VALUES)), rng.choice(FRAGMENTS), "<tool_response>\n\ud800 42\n</tool_response>"])
            for _ in range(rng.randint(1, 6))
        ) + " final answer 42 \ud800"
    return rng.choice(["<tool_call>" * 5000, "[" * 100_000, "(" * 10_000, "x" * 200_001, "{" * 3000 + '"', GIANT_WITH_CALL])


def hostile_rows(n: int, seed: int = 0) -> tuple[list[str], list[object], list[object]]:
    """n (output, ground truth, extra_info) triples, as three lists."""
    rng = random.Random(seed)
    outs = [hostile_output(rng) for _ in range(n)]
    gts = [rng.choice(HOSTILE_GROUND_TRUTHS) for _ in range(n)]
    extras = [rng.choice([None, {"input": "\ud800?"}, {"gold_answer": 1}, "x"]) for _ in range(n)]
    return outs, gts, extras


GOOD_RATING = "<response><response_quality><reasoning>ok</reasoning><rating>good</rating></response_quality></response>"


class JudgeEndpoint(ThreadingHTTPServer):
    """An OpenAI-compatible judge on 127.0.0.1 that rates every answer "good" and counts the request
    bodies that were not valid JSON (`bad`): hostile text must never break the request itself."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _JudgeHandler)
        self.lock = threading.Lock()
        self.requests = 0
        self.bad = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}/v1"


class _JudgeHandler(BaseHTTPRequestHandler):
    server: JudgeEndpoint

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        try:
            json.loads(raw)
            code, payload = 200, {"choices": [{"message": {"content": GOOD_RATING}}]}
        except ValueError:
            code, payload = 400, {"error": "bad json"}
        with self.server.lock:
            self.server.requests += 1
            self.server.bad += code != 200
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def judge_endpoint() -> Iterator[JudgeEndpoint]:
    """Serve a `JudgeEndpoint` on a free port until the block ends."""
    server = JudgeEndpoint()
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
