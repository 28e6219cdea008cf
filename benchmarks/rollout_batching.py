"""Rollout generation cost: one batched generator call per round vs one call per trajectory.

    .venv/bin/python benchmarks/rollout_batching.py [--quick] [--threads N]

Tiny backbone of the embedded default (hidden 128, 2 layers, 4/2 heads, vocab ~2,000, random weights),
a GRPO step of P prompts × n samples with max_response_length new tokens. Baseline (same run): the
`hf` generator called once per trajectory. Also times transformers' own `model.generate` on the
same batch (sampling, per-row stop ids) for the generator's inner loop. Prints seconds and ratios.
"""

from __future__ import annotations

import argparse
import json
import time


def rows_and_corpus(n_rows: int):
    tools = [{"type": "function", "function": {"name": f"tool_{k}", "description": f"Tool number {k}.",
              "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                             "required": ["city"]}}} for k in range(8)]
    cities = ["Paris", "Oslo", "Rome", "Lima", "Kyoto", "Cairo", "Quito", "Perth"]
    rows, corpus = [], []
    for i in range(n_rows):
        q = f"What will the weather be in {cities[i % 8]} for the next {i % 5 + 1} days?"
        rows.append({"prompt": [{"role": "user", "content": q}], "tools": json.dumps(tools[i % 5 : i % 5 + 3]),
                     "extra_info": {"gold_responses": "[]"}})
        corpus.append(f"<|im_start|>user\n{q}<|im_end|>\n<|im_start|>assistant\n<tool_call>\n"
                      f'{{"name": "tool_{i % 8}", "arguments": {{"city": "{cities[i % 8]}", "days": {i % 5 + 1}}}}}'
                      "\n</tool_call><|im_end|>\n")
    return rows, corpus * 20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="4 prompts × 4 samples, 32 tokens")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (1 avoids stalls on shared cores)")
    args = ap.parse_args()
    import torch

    from slca.models.tiny import init_model, train_tokenizer
    from slca.config.groups.backbone import TinyBackbone
    from slca.rollout import HFGenerator, RolloutConfig, run_rollouts
    from slca.sim import build_simulator

    torch.set_num_threads(args.threads)
    prompts, n, new = (4, 4, 32) if args.quick else (8, 8, 60)
    rows, corpus = rows_and_corpus(prompts)
    cfg_b = TinyBackbone(vocab_size=2000)
    tok = train_tokenizer(corpus, cfg_b)
    model = init_model(cfg_b, tok).eval()
    sim = build_simulator({"name": "schema"})
    cfg = RolloutConfig(max_prompt_length=1024, max_response_length=new, temperature=1.0)
    gen = HFGenerator(model, pad_token_id=tok.pad_token_id)

    def batched():
        return run_rollouts(rows, n=n, generator=gen, simulator=sim, tokenizer=tok, cfg=cfg, seed=0)

    def per_trajectory():
        # the same loop, but each trajectory alone: P×n generator calls per round
        out = []
        for i, row in enumerate(rows):
            for s in range(n):
                out += run_rollouts([row], n=1, generator=gen, simulator=sim, tokenizer=tok, cfg=cfg, seed=i * n + s)
        return out

    batched()  # warm-up
    t0 = time.perf_counter()
    b = batched()
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    per_trajectory()
    t_single = time.perf_counter() - t0

    # transformers' generate on the same first-round batch (left padded), sampling, stop ids per row
    ids = [t.prompt_ids for t in b]
    width = max(map(len, ids))
    input_ids = torch.tensor([[tok.pad_token_id] * (width - len(p)) + p for p in ids])
    attn = (torch.arange(width)[None, :] >= torch.tensor([width - len(p) for p in ids])[:, None]).long()
    stops = sorted({tok.convert_tokens_to_ids("</tool_call>"), tok.convert_tokens_to_ids("<|im_end|>")})
    t0 = time.perf_counter()
    with torch.inference_mode():
        model.generate(input_ids=input_ids, attention_mask=attn, do_sample=True, temperature=1.0, top_p=1.0,
                       max_new_tokens=new, eos_token_id=stops, pad_token_id=tok.pad_token_id)
    t_hf_generate = time.perf_counter() - t0
    t0 = time.perf_counter()
    gen.generate(ids, max_new_tokens=new, temperature=1.0, top_p=1.0, stop_token_ids=set(stops), seed=0)
    t_ours = time.perf_counter() - t0

    tokens = sum(t.response_length for t in b)
    print(f"{prompts} prompts × {n} samples, ≤{new} new tokens, {tokens} response tokens, "
          f"{sum(p.numel() for p in model.parameters()) / 1e6:.2f}M params, threads={args.threads}")
    print(f"per-trajectory calls (baseline): {t_single:7.3f} s")
    print(f"batched, one call per round:     {t_batched:7.3f} s  speed-up ×{t_single / t_batched:.1f}"
          f"  ({b.stats.generator_calls} generator calls)")
    print(f"one round, model.generate:       {t_hf_generate:7.3f} s")
    print(f"one round, hf generator loop:    {t_ours:7.3f} s  ratio to model.generate ×{t_hf_generate / t_ours:.2f}")


if __name__ == "__main__":
    main()
