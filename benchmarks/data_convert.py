"""Benchmark: SFT parquet → LLaMA-Factory file, slca's streaming converter vs a naive baseline.

Synthesises an SFT parquet with Toucan-like rows (~11k characters: a hermes system turn with
several long tool schemas, prose + calls, parallel calls, long tool outputs, a long answer),
then converts it
  * with slca (`slca.data.convert.convert_file`, streaming, validated, JSON Lines out), and
  * with the naive baseline: load everything with pandas, convert row by row, dump one JSON array,
each in its own subprocess, reporting rows/s and peak RSS (per-child rusage from os.wait4).

Anchor (issue 4): the reference converter does ~3,100 rows/s at 1.4 GB peak RSS on 74,241 rows.
Targets: >= 10,000 rows/s on one core, peak RSS < 512 MiB.

    .venv/bin/python benchmarks/data_convert.py            # 74,241 rows
    .venv/bin/python benchmarks/data_convert.py --quick    # 5,000 rows
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

N_FULL = 74_241
N_SERVERS = 500


def _tool(k: int, server: int) -> dict:
    desc = (f"Tool number {k} of server {server}. " + "It returns structured information about the request, "
            "including identifiers, timestamps, quantities and free-text notes. " * 4)
    return {"type": "function", "function": {
        "name": f"server{server}-tool_{k}",
        "description": desc,
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "What to look up. " * 4},
            "limit": {"type": "integer", "description": "Maximum number of results.", "default": 10},
            "mode": {"type": "string", "enum": ["fast", "full", "summary"], "description": "Detail level."},
        }, "required": ["query"], "additionalProperties": False}}}


def toucan_like_row(i: int, n_servers: int = N_SERVERS) -> dict:
    """One SFT row of roughly Toucan's size and shape (system tools, prose, parallel calls).

    Each row offers the tools of one of `n_servers` servers (Toucan's rows come from 495 MCP
    servers), picked pseudo-randomly; n_servers=0 gives every row its own tool set.
    """
    from slca.data import hermes

    server = (i * 7919) % n_servers if n_servers else N_SERVERS + i
    tools = [_tool(k, server) for k in range(6)]
    names = [t["function"]["name"] for t in tools]
    system = hermes.reference_system(tools)
    q = f"Request {i}: please look up item {i % 997} and compare it with item {(i * 7) % 991}. " + "Add context. " * 20
    resp = lambda tag: json.dumps({"id": tag, "notes": "observation text " * 45, "values": list(range(30))})  # noqa: E731
    conv = [
        {"from": "system", "value": system},
        {"from": "human", "value": q},
        {"from": "gpt", "value": "I'll look both up in parallel. " + hermes.render_calls(
            [{"name": names[0], "arguments": {"query": f"item {i % 997}"}},
             {"name": names[1], "arguments": {"query": f"item {(i * 7) % 991}", "limit": 5}}], parallel_style="blocks")},
        {"from": "human", "value": hermes.render_responses([resp(f"a{i}"), resp(f"b{i}")])},
        {"from": "gpt", "value": hermes.render_calls([{"name": names[2], "arguments": {"query": "summary", "mode": "full"}}])},
        {"from": "human", "value": hermes.render_responses([resp(f"c{i}")])},
        {"from": "gpt", "value": f"Here is the comparison for request {i}. " + "The first item is larger on most measures. " * 30},
    ]
    return {"uuid": f"bench-{i}", "subset_name": "bench", "question": q, "target_tools": ", ".join(names[:3]),
            "conversations": conv}


def make_input(path: Path, n: int, n_servers: int) -> None:
    from slca.data.io import RowWriter
    from slca.data.schemas import arrow_schema

    with RowWriter(path, arrow_schema("sft"), batch_size=1024) as w:
        for i in range(n):
            w.write(toucan_like_row(i, n_servers))


# ---------------------------------------------------------------- workers (run in subprocesses)

def worker_slca(inp: str, out: str) -> int:
    from slca.data.convert import convert_file

    return convert_file(inp, out, layout="llamafactory").rows_out


def worker_naive(inp: str, out: str) -> int:
    """The reference materialiser's approach: whole table in memory, one output list, one dump."""
    import ast
    import re

    import pandas as pd

    df = pd.read_parquet(inp)
    records = []
    for _, row in df.iterrows():
        conv = list(row["conversations"])
        # the first non-empty <tools> block (hermes prompts also say "<tools></tools>" in prose)
        body = next(b for b in re.findall(r"<tools>(.*?)</tools>", conv[0]["value"], re.DOTALL) if b.strip())
        tools = [json.loads(x) for x in body.strip().splitlines() if x.strip()]
        msgs = []
        for t in conv[1:]:
            v = t["value"]
            if t["from"] == "human":
                r = re.search(r"<tool_response>(.*?)</tool_response>", v, re.DOTALL)
                msgs.append({"role": "tool_response", "content": r.group(1).strip()} if r else {"role": "user", "content": v})
            else:
                c = re.search(r"<tool_call>(.*?)</tool_call>", v, re.DOTALL)
                if not c:
                    msgs.append({"role": "assistant", "content": v})
                    continue
                body = c.group(1).strip()
                try:
                    calls = json.loads(body)
                except json.JSONDecodeError:
                    calls = ast.literal_eval(body)
                for call in calls if isinstance(calls, list) else [calls]:
                    msgs.append({"role": "tool_call", "content": str({"name": call["name"], "arguments": json.dumps(call["arguments"], ensure_ascii=False)})})
        records.append({"messages": json.dumps(msgs, ensure_ascii=False), "tools": json.dumps(tools, ensure_ascii=False)})
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(records, fh, ensure_ascii=False)
    return len(records)


WORKERS = {"slca": worker_slca, "naive": worker_naive}
# imported before the clock starts, so both sides are timed on conversion work only
PRELOAD = {"slca": ("pyarrow.parquet", "slca.data.convert"), "naive": ("pandas", "pyarrow.parquet")}


def run_child(kind: str, inp: Path, out: Path) -> dict:
    """Run one converter in a subprocess; wall time and that child's own peak RSS."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--worker", kind, "--input", str(inp), "--output", str(out)],
                            stdout=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    stdout = proc.stdout.read()
    proc.stdout.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} worker failed with {proc.returncode}")
    info = json.loads(stdout.strip().splitlines()[-1])
    rss_mib = usage.ru_maxrss / 1024  # Linux reports KiB
    # CPU seconds of the conversion itself (one thread each): the per-core figure, robust to
    # other processes sharing the machine; wall time is reported alongside.
    return {"kind": kind, "rows": info["rows"], "cpu_s": info["cpu_s"], "convert_wall_s": info["seconds"],
            "process_wall_s": wall, "rows_per_cpu_s": info["rows"] / info["cpu_s"],
            "rows_per_wall_s": info["rows"] / info["seconds"], "peak_rss_mib": rss_mib,
            "output_mib": out.stat().st_size / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="5,000 rows instead of 74,241")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--servers", type=int, default=N_SERVERS,
                    help="distinct tool sets in the input (0: every row has its own)")
    ap.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    ap.add_argument("--input", help=argparse.SUPPRESS)
    ap.add_argument("--output", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        import importlib

        for mod in PRELOAD[args.worker]:
            importlib.import_module(mod)
        t0, c0 = time.perf_counter(), time.process_time()
        n = WORKERS[args.worker](args.input, args.output)
        print(json.dumps({"rows": n, "seconds": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}))
        return
    n = args.rows or (5_000 if args.quick else N_FULL)
    with tempfile.TemporaryDirectory(prefix="slca_bench_") as tmp:
        d = Path(tmp)
        inp = d / "sft.parquet"
        t0 = time.perf_counter()
        make_input(inp, n, args.servers)
        from slca.data.io import read_rows

        first = next(read_rows(inp))
        chars = sum(len(t["value"]) for t in first["conversations"])
        print(f"input: {n:,} rows, ~{chars:,} chars/row, {args.servers or n} distinct tool sets, "
              f"{inp.stat().st_size / 2**20:.1f} MiB parquet (built in {time.perf_counter() - t0:.1f}s)")
        res = [run_child("slca", inp, d / "out_slca.jsonl"), run_child("naive", inp, d / "out_naive.json")]
    for r in res:
        print(f"{r['kind']:>6}: {r['rows']:,} rows, {r['cpu_s']:.2f} CPU-s ({r['rows_per_cpu_s']:,.0f} rows/CPU-s), "
              f"{r['convert_wall_s']:.2f}s wall ({r['rows_per_wall_s']:,.0f} rows/s), "
              f"peak RSS {r['peak_rss_mib']:,.0f} MiB, output {r['output_mib']:,.0f} MiB")
    s, b = res
    print(f"ratio slca/naive: {s['rows_per_cpu_s'] / b['rows_per_cpu_s']:.2f}x rows/CPU-s, "
          f"{s['rows_per_wall_s'] / b['rows_per_wall_s']:.2f}x rows/s wall, "
          f"{s['peak_rss_mib'] / b['peak_rss_mib']:.2f}x peak RSS")
    print(f"targets: >= 10,000 rows/s on one core -> {'met' if s['rows_per_cpu_s'] >= 10_000 else 'NOT met'}; "
          f"peak RSS < 512 MiB -> {'met' if s['peak_rss_mib'] < 512 else 'NOT met'}")


if __name__ == "__main__":
    main()
