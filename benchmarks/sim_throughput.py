"""Tool-simulator cost per call, as ratios to serialising the call (baseline, same run).

    .venv/bin/python benchmarks/sim_throughput.py [--quick]

Measures the `schema` simulator with row-bound tools and with tools passed per call (re-indexed
each time), and `sgls` against a local stub endpoint: uncached (HTTP round trip) vs cache hit.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from slca.config.groups.simulator import SchemaSimulator, SglsSimulator
from slca.sim import build_simulator
from slca.sim.synth import example_arguments
from slca.sim.types import index_tools

PREVIEW = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "reference" / "toucan_toolcall_rl.preview.jsonl"


def load_tools() -> list[dict]:
    rows = [json.loads(line) for line in PREVIEW.read_text().splitlines() if line.strip()]
    return max((json.loads(r["tools"]) for r in rows), key=len)


def per_call(fn, calls) -> float:
    start = time.perf_counter()
    for c in calls:
        fn(c)
    return (time.perf_counter() - start) / len(calls)


class Stub(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps({"choices": [{"message": {"content": '<tool_response>{"v": 1}</tool_response>'}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    n = 300 if ap.parse_args().quick else 3000
    tools = load_tools()
    specs = list(index_tools(tools).values())
    rng = random.Random(0)
    calls = [{"name": s.name, "arguments": example_arguments(s, rng)} for s in (rng.choice(specs) for _ in range(n))]

    base = per_call(lambda c: json.dumps(c, sort_keys=True), calls)
    bound = build_simulator(SchemaSimulator(), tool_schemas=tools)
    unbound = build_simulator(SchemaSimulator())
    rows = [("baseline json.dumps(call)", base),
            ("schema, row-bound tools", per_call(bound.respond, calls)),
            (f"schema, tools per call ({len(tools)} tools)", per_call(lambda c: unbound.respond(c, tools=tools), calls))]

    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as cache:
        cfg = SglsSimulator(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", cache_dir=cache)
        sgls = build_simulator(cfg, tool_schemas=tools)
        distinct = list({json.dumps(c, sort_keys=True): c for c in calls[: n // 10]}.values())
        rows.append(("sgls, local endpoint, cache miss", per_call(sgls.respond, distinct)))
        rows.append(("sgls, cache hit", per_call(sgls.respond, distinct)))
    server.shutdown()

    print(f"{'what':45s} {'us/call':>10s} {'x baseline':>11s}")
    for what, t in rows:
        print(f"{what:45s} {t * 1e6:10.1f} {t / base:11.1f}")


if __name__ == "__main__":
    main()
