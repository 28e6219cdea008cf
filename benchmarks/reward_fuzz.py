"""Fuzz volume through every reward path: hostile model outputs (tests/rewards/hostile.py) pushed
through both parsers, HierR and exact match (one-row and batch entry points) under every judge
(`llm` against a local HTTP server that checks each request is valid JSON). Prints, per path, the
outputs pushed, the exceptions raised and the rows the safety net's catch-all had to produce
(target 0 and 0), and the rate.

    .venv/bin/python benchmarks/reward_fuzz.py [--quick] [--n 20000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from slca.config.groups.reward import ExactMatchReward, HierRReward, JudgeConfig  # noqa: E402
from slca.rewards import RewardRecord, compute_score, compute_score_batch  # noqa: E402
from slca.rewards.metrics import aggregate_rows  # noqa: E402
from slca.rewards.net import INTERNAL_ERROR  # noqa: E402
from slca.toolcall import parse_hermes, parse_pythonic  # noqa: E402
from tests.rewards.hostile import hostile_rows, judge_endpoint  # noqa: E402

def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="2,000 outputs per path")
    ap.add_argument("--n", type=int, default=20_000, help="outputs per path")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    n = 2_000 if args.quick else args.n

    with judge_endpoint() as srv:
        fuzz(args, n, srv)


def fuzz(args: argparse.Namespace, n: int, srv) -> None:
    cache = tempfile.mkdtemp(prefix="slca-fuzz-judge-")
    llm = JudgeConfig(name="llm", base_url=srv.url, cache_dir=cache, max_retries=0,
                      require_tool_response=False, min_response_chars=0)
    configs = {
        "hierr hermes grounding": HierRReward(),
        "hierr pythonic grounding": HierRReward(parser="pythonic"),
        "hierr hermes none": HierRReward(judge=JudgeConfig(name="none", cache_dir=None)),
        "hierr hermes llm": HierRReward(judge=llm),
        "exact_match hermes": ExactMatchReward(require_think=True),
        "exact_match pythonic": ExactMatchReward(parser="pythonic"),
    }
    outs, gts, extras = hostile_rows(n, seed=args.seed)
    total_exc = total_net = total = 0
    print(f"{'path':<44}{'outputs':>9}{'exceptions':>12}{'catch-all':>11}{'rows/s':>10}")

    def report(path: str, fn) -> None:
        nonlocal total_exc, total_net, total
        t0 = time.perf_counter()
        exc = net = 0
        try:
            rows = fn()
        except Exception as e:  # noqa: BLE001 - counted, that is the point
            exc, rows = 1, []
            print(f"  {path}: {type(e).__name__}: {e}"[:200])
        dt = time.perf_counter() - t0
        net = sum(1 for r in rows if isinstance(r, dict) and str(r.get("error_type", "")).startswith(INTERNAL_ERROR))
        total_exc += exc
        total_net += net
        total += n
        print(f"{path:<44}{n:>9,}{exc:>12}{net:>11}{n / dt:>10,.0f}")

    def one_by_one(parse):
        out = []
        for o in outs:
            try:
                out.append(parse(o))
            except Exception:  # noqa: BLE001
                out.append({"error_type": f"{INTERNAL_ERROR}:raised"})
        return out

    report("parse_hermes", lambda: one_by_one(parse_hermes))
    report("parse_pythonic", lambda: one_by_one(parse_pythonic))
    for name, cfg in configs.items():
        rows = []
        report(f"compute_score       {name}", lambda: rows.extend(compute_score("d", o, g, e, reward_config=cfg) for o, g, e in zip(outs, gts, extras)) or rows)
        report(f"compute_score_batch {name}", lambda: compute_score_batch(["d"] * n, outs, gts, extras, reward_config=cfg))
        report(f"records + metrics   {name}", lambda: [RewardRecord.from_row(r) for r in rows] and [aggregate_rows(rows)] and rows)
    print(f"total: {total:,} outputs, {total_exc} exceptions, {total_net} catch-all rows, {srv.bad} invalid judge request bodies (target 0, 0, 0)")


if __name__ == "__main__":
    main()
