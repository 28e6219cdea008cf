"""slca's BFCL checker against BFCL's own `ast_checker` on a real model's outputs (issue 28 item 6).

The model (default: the untrained SmolLM2-135M-Instruct backbone, converted from the fetched GGUF)
answers the first `--limit` entries of each BFCL single-turn category that has gold answers, rolled
out exactly as `slca eval eval.benchmark=bfcl` rolls them out (same prompts, one greedy turn). Each
output is scored twice: by slca's `check` on the raw text, and by BFCL's `ast_checker`
(tests/evaluation/bfcl_reference.py) on the calls slca's decoder reads from it; an output with no
readable call is invalid to BFCL before its checker runs (its decoder fails). Prints agreeing/total,
per category and per verdict pair, and every disagreement with both reasons.

    .venv/bin/python benchmarks/bfcl_checker_agreement.py [--model DIR] [--limit 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from slca.config.compose import compose_spec  # noqa: E402
from slca.evaluation.benchmarks import BenchmarkInputs  # noqa: E402
from slca.evaluation.bfcl import CATEGORIES, check, decode  # noqa: E402
from slca.evaluation.bfcl.run import load_entries, selected  # noqa: E402
from slca.evaluation.harness import effective_seeds, evaluate_grid  # noqa: E402
from slca.evaluation.run import eval_rollout_config  # noqa: E402
from tests.evaluation.bfcl_reference import load_bfcl_ast_checker  # noqa: E402


def no_sft_rows() -> list:
    raise AssertionError("a converted GGUF backbone reads no SFT rows")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", help="model directory (default: the experiment's untrained backbone)")
    ap.add_argument("--experiment", default="real_cpu", help="experiment whose backbone and eval caps are used")
    ap.add_argument("--limit", type=int, default=3, help="entries per category")
    ap.add_argument("--max-response", type=int, default=128, help="tokens of the one answer turn")
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    args = ap.parse_args()

    import torch

    from slca.models.backbones import backbone_dir
    from slca.models.load import load_backbone
    from slca.rollout import get_generator

    torch.set_num_threads(args.threads)
    answered = [n for n in CATEGORIES.names() if CATEGORIES.get(n).has_answers]
    spec = compose_spec([f"experiment={args.experiment}", "eval.benchmark=bfcl", f"eval.limit={args.limit}",
                         f"eval.categories=[{','.join(answered)}]", "eval.rollout.max_prompt_length=4096",
                         f"eval.rollout.max_response_length={args.max_response}"])
    model_dir = args.model or backbone_dir(spec.backbone, no_sft_rows)
    model, tokenizer = load_backbone(model_dir)
    model.eval()
    entries = load_entries(args.limit, selected(spec.eval))
    seeds, _ = effective_seeds(spec.eval)
    inputs = BenchmarkInputs(eval_cfg=spec.eval, tokenizer=tokenizer, rollout_cfg=eval_rollout_config(spec.eval), seeds=seeds,
                             split_path=None, reward_cfg=spec.reward, simulator_cfg=spec.simulator, progress=False)
    outputs: list[tuple[int, str]] = []

    def collect(batch) -> dict[str, float]:
        outputs.extend((t.row_index, t.solution_text) for t in batch)
        return {}

    start = time.perf_counter()
    evaluate_grid([e.row() for e in entries], generator=get_generator("hf")(model, pad_token_id=tokenizer.pad_token_id),
                  simulator=None, rollout_cfg=dataclasses.replace(inputs.rollout_cfg, max_tool_rounds=0), inputs=inputs,
                  label="bfcl", score=collect)
    elapsed = time.perf_counter() - start

    bfcl = load_bfcl_ast_checker()
    pairs: Counter = Counter()
    by_category: Counter = Counter()
    disagreements = []
    for index, text in outputs:
        entry = entries[index]
        ours, why = check(entry.functions, text, entry.possible_answer, entry.category)
        decoded = decode(text)
        if decoded.ok and decoded.calls:
            verdict = bfcl(entry, list(decoded.calls))
            theirs, their_why = bool(verdict["valid"]), "; ".join(map(str, verdict.get("error", []))) or verdict.get("error_type", "")
        else:
            theirs, their_why = False, f"no call decoded ({decoded.error or 'empty'})"
        pairs[(ours, theirs)] += 1
        by_category[(entry.category, ours == theirs)] += 1
        if ours != theirs:
            disagreements.append(f"{entry.id}: slca={ours} ({why}) bfcl={theirs} ({their_why}) :: {text[:200]!r}")

    total = sum(pairs.values())
    agree = pairs[(True, True)] + pairs[(False, False)]
    print(f"model: {model_dir}")
    print(f"{len(outputs)} outputs of {len(entries)} entries ({args.limit} per category) generated in {elapsed:.0f} s")
    print(f"agreement: {agree}/{total}  (both valid {pairs[(True, True)]}, both invalid {pairs[(False, False)]}, "
          f"slca only {pairs[(True, False)]}, bfcl only {pairs[(False, True)]})")
    readable = sum(1 for _, t in outputs if decode(t).ok and decode(t).calls)
    print(f"outputs with a readable call: {readable}/{total}")
    for name in answered:
        n = by_category[(name, True)] + by_category[(name, False)]
        if n:
            print(f"  {name:28s} {by_category[(name, True)]}/{n}")
    for line in disagreements:
        print("  disagree:", line)


if __name__ == "__main__":
    main()
