"""slca's ACEBench checker against ACEBench's own evaluation code: verdicts agreeing out of verdicts,
per output kind (the gold answer and each perturbation), every disagreement listed, and the time
each side takes on the same outputs (ACEBench's time includes its subprocess and spreadsheet writing);
then the agent categories: gold milestone paths and their perturbations replayed through slca's
executor, each episode's end-to-end verdict and process accuracy from both sides.

    make acebench-env && .venv/bin/python benchmarks/acebench_agreement.py
"""

from __future__ import annotations

import argparse
import time
from collections import Counter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="entries per category (default: all)")
    args = parser.parse_args()

    from slca.evaluation.acebench.agreement import ENV_PYTHON, batches, compare, run_upstream
    from slca.evaluation.acebench.score import check

    start = time.perf_counter()
    agreement = compare(ENV_PYTHON, limit=args.limit)
    total = time.perf_counter() - start
    print(agreement.table())
    decided = agreement.decided
    print(f"\nagreement: {agreement.agreeing} / {len(decided)} verdicts; ACEBench raised on {len(agreement.raised)}")
    for v in agreement.disagreements:
        print(f"  disagree {v.category} {v.id} {v.kind}: slca={v.slca} ({v.slca_error}) ACEBench={v.acebench}")
    for v in agreement.raised:
        print(f"  ACEBench raised {v.category} {v.id} {v.kind}: {v.raised}; slca={v.slca} ({v.slca_error})")
    gold_fail = Counter(v.category for v in agreement.verdicts if v.kind == "gold" and not v.acebench)
    print(f"gold answers ACEBench's own rules fail: {sum(gold_fail.values())} {dict(gold_fail)}")

    batch_list, entries = batches(limit=args.limit)
    start = time.perf_counter()
    for batch in batch_list:
        for entry, text in zip(entries[batch["category"]], batch["texts"]):
            check(entry, text)
    ours = time.perf_counter() - start
    start = time.perf_counter()
    run_upstream(ENV_PYTHON, batch_list)
    theirs = time.perf_counter() - start
    n = sum(len(b["texts"]) for b in batch_list)
    print(f"\nscoring {n} outputs: slca {ours:.2f} s, ACEBench {theirs:.2f} s (ratio {theirs / ours:.1f}x); whole comparison {total:.1f} s")

    from slca.evaluation.acebench.agent_agreement import compare as compare_agent

    start = time.perf_counter()
    agent = compare_agent(ENV_PYTHON, limit=args.limit)
    print(f"\nagent categories ({time.perf_counter() - start:.1f} s):\n{agent.table()}")
    print(f"agreement: {len(agent.decided) - len(agent.disagreements)} / {len(agent.decided)} episodes "
          f"(end to end and process); ACEBench raised on {len(agent.verdicts) - len(agent.decided)}")
    for v in agent.disagreements:
        print(f"  disagree {v.category} {v.id} {v.kind}: slca={v.slca} ACEBench={v.acebench}")
    for v in agent.verdicts:
        if v.kind == "gold" and not v.slca[0]:
            print(f"  gold replay fails {v.id}: slca={v.slca} ACEBench={v.acebench}")


if __name__ == "__main__":
    main()
