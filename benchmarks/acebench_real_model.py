"""A real small model on ACEBench, scored by slca's checker and by ACEBench's own evaluation code.

The model (default: the untrained SmolLM2-135M-Instruct backbone of `experiment=real_cpu`, converted
from the fetched GGUF) answers the first `--limit` entries of every ACEBench category, rolled out
as `slca eval eval.benchmark=acebench` rolls them out (ACEBench's own prompts, one greedy turn; the
generator batched by `--batch` so long prompts fit in memory). Prints slca's per-category numbers,
then the same outputs scored by ACEBench's eval_main.py in its own environment (`make acebench-env`):
verdicts agreeing out of verdicts, and every disagreement with slca's reason and the output.

    .venv/bin/python benchmarks/acebench_real_model.py [--model DIR] [--limit 1] [--batch 1] [--threads 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import Counter


def no_sft_rows() -> list:
    raise AssertionError("a converted GGUF backbone reads no SFT rows")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", help="model directory (default: the experiment's untrained backbone)")
    ap.add_argument("--experiment", default="real_cpu", help="experiment whose backbone is used")
    ap.add_argument("--limit", type=int, default=1, help="entries per category")
    ap.add_argument("--max-response", type=int, default=128, help="tokens of the one answer turn")
    ap.add_argument("--batch", type=int, default=1, help="prompts per generation batch")
    ap.add_argument("--threads", type=int, default=2, help="torch threads")
    args = ap.parse_args()

    import torch

    from slca.config.compose import compose_spec
    from slca.evaluation.acebench.agreement import ENV_PYTHON, run_upstream
    from slca.evaluation.acebench.data import load_category
    from slca.evaluation.acebench.gold import reference_answer
    from slca.evaluation.acebench.run import HEADLINE, load_entries, score_outputs, selected
    from slca.evaluation.acebench.score import check
    from slca.evaluation.benchmarks import BenchmarkInputs
    from slca.evaluation.harness import effective_seeds, evaluate_grid
    from slca.evaluation.run import eval_rollout_config
    from slca.models.backbones import backbone_dir
    from slca.models.load import load_backbone
    from slca.rollout import get_generator

    torch.set_num_threads(args.threads)
    spec = compose_spec([f"experiment={args.experiment}", "eval.benchmark=acebench", f"eval.limit={args.limit}",
                         "eval.system_prompts=[acebench_default]", "eval.rollout.max_prompt_length=8192",
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
        return score_outputs(entries, [(t.row_index, t.solution_text) for t in batch])

    start = time.perf_counter()
    (cell,) = evaluate_grid([e.row() for e in entries],
                            generator=get_generator("hf")(model, pad_token_id=tokenizer.pad_token_id, max_batch_size=args.batch),
                            simulator=None, rollout_cfg=dataclasses.replace(inputs.rollout_cfg, max_tool_rounds=0), inputs=inputs,
                            label="acebench", score=collect)
    elapsed = time.perf_counter() - start
    print(f"model: {model_dir}")
    print(f"{len(outputs)} outputs of {len(entries)} entries ({args.limit} per category) generated in {elapsed:.0f} s")
    (seed,) = cell.per_seed
    for name in (m for m in HEADLINE if m in seed):  # the agent categories are not run here
        print(f"  {name:40s} {seed[name]:.3f}")

    # ACEBench scores whole category files: the entries not generated get their gold text and are not compared.
    texts = {entries[i].id: t for i, t in outputs}
    batch_list = []
    for name in dict.fromkeys(e.category for e in entries):
        every = load_category(name)
        batch_list.append({"category": name, "model": "slca_real", "texts": [texts.get(e.id, reference_answer(e)) for e in every]})
    theirs = {v["id"]: v for v in run_upstream(ENV_PYTHON, batch_list)}
    pairs: Counter = Counter()
    disagreements = []
    for index, text in outputs:
        entry = entries[index]
        ours, why = check(entry, text)
        verdict = theirs[entry.id]
        pairs[(ours, verdict["valid"])] += 1
        if ours != verdict["valid"]:
            disagreements.append(f"{entry.id}: slca={ours} ({why}) ACEBench={verdict['valid']} {verdict['raised'] or ''} :: {text[:200]!r}")
    agree = pairs[(True, True)] + pairs[(False, False)]
    print(f"agreement with ACEBench's eval_main.py: {agree}/{sum(pairs.values())}  (both valid {pairs[(True, True)]}, "
          f"both invalid {pairs[(False, False)]}, slca only {pairs[(True, False)]}, ACEBench only {pairs[(False, True)]}, "
          f"ACEBench raised {pairs[(False, None)] + pairs[(True, None)]})")
    for line in disagreements:
        print("  disagree:", line)
    for index, text in outputs[:5]:
        print(f"  sample {entries[index].id}: {text[:160]!r}")


if __name__ == "__main__":
    main()
