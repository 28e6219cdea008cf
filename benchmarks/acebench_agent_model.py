"""A model as the agent of ACEBench's agent_multi_step category (no user simulator needed), greedy,
through slca's executor and ACEBench's conversation protocol; prints end-to-end and process accuracy.

The default model is an untrained tiny Qwen3 (one layer, random weights) whose tokenizer is trained
on the category's own prompts, built in a scratch directory; `--model DIR` takes any saved model.

    .venv/bin/python benchmarks/acebench_agent_model.py [--model DIR] [--limit N] [--max-new 64] [--threads 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def tiny_policy(out: Path, corpus: list[str]) -> Path:
    from slca.config.groups.backbone import TinyBackbone
    from slca.models.tiny import init_model, train_tokenizer

    cfg = TinyBackbone(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64, vocab_size=1024)
    tokenizer = train_tokenizer(corpus, cfg)
    init_model(cfg, tokenizer).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", help="model directory (default: an untrained tiny model built here)")
    ap.add_argument("--limit", type=int, default=None, help="entries (default: all 20)")
    ap.add_argument("--max-new", type=int, default=64, help="tokens per agent message")
    ap.add_argument("--max-messages", type=int, default=40, help="messages after the request (ACEBench: 40)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads")
    args = ap.parse_args()

    import torch

    from slca.evaluation.acebench.agent_data import load_agent_category
    from slca.evaluation.acebench.agent_loop import Message, run_episode
    from slca.evaluation.acebench.agent_prompt import multi_step_messages
    from slca.evaluation.acebench.agent_score import score_episode
    from slca.models.load import load_backbone
    from slca.rollout import get_generator
    from slca.rollout.chat import ChatFormat

    torch.set_num_threads(args.threads)
    entries = load_agent_category("agent_multi_step", limit=args.limit)
    with tempfile.TemporaryDirectory() as scratch:
        corpus = [m["content"] for e in entries for m in multi_step_messages(e, [Message("user", "agent", e.question)])]
        model_dir = args.model or str(tiny_policy(Path(scratch), corpus))
        model, tokenizer = load_backbone(model_dir)
    model.eval()
    fmt = ChatFormat(tokenizer)
    generator = get_generator("hf")(model, pad_token_id=tokenizer.pad_token_id, max_batch_size=1)
    prompt_tokens = []

    def agent_for(entry):
        def speak(history):
            ids = tokenizer.encode(fmt.render_prompt(multi_step_messages(entry, history)), add_special_tokens=False)
            prompt_tokens.append(len(ids))
            (out,) = generator.generate([ids], max_new_tokens=args.max_new, temperature=0.0, top_p=1.0,
                                        stop_token_ids=set(fmt.stop_token_ids), seed=0)
            return fmt.decode_solution(out.token_ids)
        return speak

    start = time.perf_counter()
    scores, samples = [], []
    for entry in entries:
        episode, history = run_episode(entry, agent_for(entry), max_messages=args.max_messages)
        scores.append(score_episode(entry, episode))
        samples.append(next((m.text for m in history if m.sender == "agent"), ""))
    elapsed = time.perf_counter() - start
    print(f"model: {args.model or 'untrained tiny (built here)'}; {len(entries)} agent_multi_step entries in {elapsed:.0f} s; "
          f"{len(prompt_tokens)} agent steps, prompts {min(prompt_tokens)}-{max(prompt_tokens)} tokens")
    print(f"  end_to_end {sum(s.correct for s in scores) / len(scores):.3f}")
    print(f"  process    {sum(s.process for s in scores) / len(scores):.3f}")
    for text in samples[:3]:
        print(f"  first agent message: {text[:120]!r}")


if __name__ == "__main__":
    main()
