"""Tiny-backbone SFT on the synthetic set: wall time, loss, throughput, and greedy first-step call accuracy.

Baseline measured in the same run: the plain transformers loss path (`model(..., labels=...)`, LM head
over every position) on the same batches, against slca's masked loss (LM head only where a label is).

    .venv/bin/python benchmarks/sft_tiny.py            # 3,000 conversations, 6 epochs (issue 6 setting)
    .venv/bin/python benchmarks/sft_tiny.py --quick    # 300 conversations, 1 epoch
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from collections import Counter
from pathlib import Path


def _load_rows(n_sft: int, cache: str):
    from slca.config.groups.data import SyntheticData
    from slca.data.io import read_rows
    from slca.data.synth import ensure_synthetic

    paths = ensure_synthetic(SyntheticData(n_sft=n_sft, cache_dir=cache))
    return list(read_rows(paths.sft)), list(read_rows(paths.eval))


def _step_times(model, tok, data, batch_size: int, steps: int, masked: bool) -> float:
    """Seconds per forward+backward over the first `steps` bucketed batches."""
    from slca.backends.local.sft import collate, epoch_batches, masked_nll_sum

    batches = epoch_batches([len(x) for x in data.ids], batch_size, seed=0, epoch=0)[:steps]
    t0 = time.perf_counter()
    for b in batches:
        ids, attn, lab = collate([data.ids[i] for i in b], [data.labels[i] for i in b], tok.pad_token_id)
        model.zero_grad(set_to_none=True)
        if masked:
            nll, n = masked_nll_sum(model, ids, attn, lab)
            (nll / n).backward()
        else:
            labels = ids.masked_fill(~lab, -100)
            model(input_ids=ids, attention_mask=attn, labels=labels).loss.backward()
    return (time.perf_counter() - t0) / len(batches)


def _first_step_accuracy(model, tok, eval_rows, max_new_tokens: int = 96, batch: int = 32) -> dict[str, float]:
    """Greedy first assistant step on the eval prompts: exact calls (multiset of name+arguments), parseable."""
    import torch

    from slca.toolcall.parse import parse_hermes
    from slca.toolcall.prompts import split_system_tools

    prompts, golds = [], []
    for r in eval_rows:
        msgs = [dict(m) for m in r["prompt"]]
        tools = None
        if msgs and msgs[0]["role"] == "system" and "<tools>" in msgs[0]["content"]:
            base, tools = split_system_tools(msgs[0]["content"])
            msgs = ([{"role": "system", "content": base}] if base else []) + msgs[1:]
        prompts.append(tok.apply_chat_template(msgs, tools=tools, tokenize=False, add_generation_prompt=True))
        gold = json.loads(r["reward_model"]["ground_truth"]["gold_tool_calls"])
        golds.append(gold[0] if gold else [])
    stop = [tok.convert_tokens_to_ids("</tool_call>"), tok.eos_token_id]
    tok.padding_side = "left"
    outs: list[str] = []
    model.eval()
    with torch.no_grad():
        for k in range(0, len(prompts), batch):
            enc = tok(prompts[k : k + batch], return_tensors="pt", padding=True, add_special_tokens=False)
            gen = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False, eos_token_id=stop, pad_token_id=tok.pad_token_id)
            outs += tok.batch_decode(gen[:, enc["input_ids"].shape[1] :], skip_special_tokens=True)
    tok.padding_side = "right"
    exact = parseable = calls_rows = parallel_rows = parallel_exact = 0
    by_kind: dict[str, list[int]] = {}
    failures = []
    for r, text, gold in zip(eval_rows, outs, golds):
        res = parse_hermes(text)
        pred = Counter(c.key() for c in res.calls)
        want = Counter((c["name"], json.dumps(c.get("arguments") or {}, sort_keys=True, ensure_ascii=False)) for c in gold)
        ok = pred == want and (bool(gold) == (res.n_open > 0))
        exact += ok
        kind = ("followup " if len(r["prompt"]) > 2 else "") + ("no call" if not gold else "parallel" if len(gold) > 1 else "single")
        by_kind.setdefault(kind, [0, 0])
        by_kind[kind][0] += ok
        by_kind[kind][1] += 1
        if not ok:
            failures.append({"question": r["reward_model"]["ground_truth"]["question_content"], "gold": gold, "output": text})
        if gold:
            calls_rows += 1
            parseable += res.n_valid > 0 and res.first_error is None
            if len(gold) > 1:
                parallel_rows += 1
                parallel_exact += ok
    n = len(outs)
    return {
        "exact": exact / n,
        "parseable_on_call_rows": parseable / max(1, calls_rows),
        "parallel_exact": parallel_exact / max(1, parallel_rows),
        "rows": n,
        "parallel_rows": parallel_rows,
        "by_kind": {k: f"{a}/{b}" for k, (a, b) in sorted(by_kind.items())},
        "failures": failures,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="300 conversations, 1 epoch")
    ap.add_argument("--epochs", type=float, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tools-block", choices=["compact", "qwen"], default="compact")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--cache", default=".cache/slca")
    ap.add_argument("--out", default=None, help="keep the SFT run (checkpoints, model, eval failures) here")
    ap.add_argument("--progress", action="store_true", help="show the SFT progress bar")
    args = ap.parse_args()

    import torch

    from slca.backends.local.sft import encode_rows, run_sft
    from slca.config.groups.backbone import TinyBackbone
    from slca.config.groups.train import SftConfig
    from slca.models.chat_template import template_source
    from slca.models.corpus import sft_corpus
    from slca.models.load import load_backbone
    from slca.models.tiny import build_tiny_backbone

    torch.set_num_threads(args.threads)
    n_sft = 300 if args.quick else 3000
    epochs = args.epochs or (1.0 if args.quick else 6.0)
    t0 = time.perf_counter()
    rows, eval_rows = _load_rows(n_sft, f"{args.cache}/data")
    t_data = time.perf_counter() - t0
    bcfg = TinyBackbone(tools_block=args.tools_block, cache_dir=f"{args.cache}/backbones")
    t0 = time.perf_counter()
    path = build_tiny_backbone(bcfg, sft_corpus(rows, template_source(bcfg.tools_block)))
    t_build = time.perf_counter() - t0
    model, tok = load_backbone(path)
    n_params = sum(p.numel() for p in model.parameters())
    cfg = SftConfig(epochs=epochs, batch_size=16, micro_batch_size=16, lr=args.lr, warmup_ratio=0.05, max_length=2048)

    t0 = time.perf_counter()
    data = encode_rows(rows, tok, max_length=cfg.max_length)
    t_encode = time.perf_counter() - t0
    k = 10 if args.quick else 20
    base_s = _step_times(model, tok, data, cfg.batch_size, k, masked=False)
    ours_s = _step_times(model, tok, data, cfg.batch_size, k, masked=True)
    model, tok = load_backbone(path)  # the timing steps touched gradients only, but start clean anyway

    before = _first_step_accuracy(model, tok, eval_rows)
    before.pop("failures")
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="sft_tiny-"))
    res = run_sft(model, tok, rows, cfg, out, seed=0, progress=args.progress, num_threads=args.threads)
    after = _first_step_accuracy(model, tok, eval_rows)
    (out / "eval_failures.json").write_text(json.dumps(after.pop("failures"), indent=1, ensure_ascii=False))

    steps = res["steps"]
    print(f"data: {len(rows)} SFT rows, {len(eval_rows)} eval rows ({t_data:.1f}s); backbone {n_params/1e6:.2f}M params, vocab {len(tok)} (build {t_build:.1f}s)")
    print(f"tools block {args.tools_block}: {res['mean_tokens_per_row']:.0f} tokens per conversation; encode {len(rows)} rows in {t_encode:.1f}s")
    print(f"step time (batch {cfg.batch_size}, fwd+bwd): transformers labels= loss {base_s*1000:.0f} ms, slca masked loss {ours_s*1000:.0f} ms -> {base_s/ours_s:.2f}x")
    print(f"SFT: {epochs:g} epochs = {steps} steps in {res['wall_s']:.1f}s ({res['wall_s']/steps*1000:.0f} ms/step, {res['tokens_per_s']:.0f} tokens/s, {args.threads} threads)")
    print("loss per epoch: " + ", ".join(f"{x:.3f}" for x in res["epoch_mean_loss"]) + f"; first step {res['first_loss']:.3f}, last {res['final_loss']:.3f}")
    print(f"rows used {res['rows_used']}/{res['rows_in']}, truncated {res['rows_truncated']}, rejected {res['rows_rejected']}")
    print(f"greedy first step on eval ({after['rows']} rows): exact {before['exact']:.1%} -> {after['exact']:.1%}; "
          f"parseable on call rows {before['parseable_on_call_rows']:.1%} -> {after['parseable_on_call_rows']:.1%}; "
          f"parallel exact {after['parallel_exact']:.1%} of {after['parallel_rows']}")
    print("exact by kind after SFT: " + ", ".join(f"{k} {v}" for k, v in after["by_kind"].items()) + f"; failures in {out}/eval_failures.json")
    if not math.isfinite(res["final_loss"]):
        raise SystemExit("loss is not finite")


if __name__ == "__main__":
    main()
