"""What one BFCL multi-turn step costs to render and tokenise, by step: the whole conversation re-tokenised
(before) against slca's incremental tokenising (`slca.rollout.chat.encode_prompts`), same run, same prompts.

Every entry is replayed through slca's loop playing its gold calls one per step, each made three times so the
longest conversations pass 30 steps (tests/evaluation/gold_replay.py, repeat=3);
each step's prompt is then rendered again and tokenised both ways. Printed: ms per step (median over the
entries that reach it) at steps 1, 10, 20 and 30, and the total. With --check, every step of every entry
of every category is also compared with a full re-render by the chat template itself (the ids must be equal).

    .venv/bin/python benchmarks/multi_turn_steps.py [--quick] [--check] [--qwen3] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from slca.evaluation.bfcl.multi_turn import CATEGORIES, load_category  # noqa: E402
from slca.rollout.chat import ChatFormat, PromptTokens, encode_prompts  # noqa: E402
from slca.rollout.protocol import protocol_prompt_fn  # noqa: E402
from tests.evaluation.gold_replay import replay, script  # noqa: E402

MARKS = (1, 10, 20, 30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the 10 longest replays of each category")
    ap.add_argument("--check", action="store_true", help="also compare every step with a full re-render")
    ap.add_argument("--qwen3", action="store_true", help="Qwen3's tokenizer and template instead of the tiny one")
    ap.add_argument("--repeat", type=int, default=3, help="times each gold call is made in a row (3: the longest pass 30 steps)")
    args = ap.parse_args()
    entries = [e for name in CATEGORIES for e in load_category(name).entries]
    if args.quick:
        entries = [e for name in CATEGORIES for e in sorted((e for e in entries if e.category == name),
                                                             key=lambda e: -len(script(e, args.repeat)))[:10]]
    if args.qwen3:
        from transformers import AutoTokenizer

        from slca.models.real_files import qwen_tokenizer_dir

        tokenizer = AutoTokenizer.from_pretrained(qwen_tokenizer_dir("qwen3"))
    else:
        from slca.config.groups.backbone import TinyBackbone
        from slca.models.tiny import train_tokenizer

        tokenizer = train_tokenizer([json.dumps([e.turns, e.functions]) for e in entries[::8]], TinyBackbone(vocab_size=4096))
    fmt = ChatFormat(tokenizer)
    prompt_fn = protocol_prompt_fn(system_prompt="bfcl_default")

    render: dict[int, list[float]] = {}
    whole: dict[int, list[float]] = {}
    incremental: dict[int, list[float]] = {}
    tokens: dict[int, list[int]] = {}
    checked = 0
    start = time.perf_counter()
    for entry in entries:
        _, steps = replay(entry, tokenizer, prompt_fn, repeat=args.repeat)
        state = PromptTokens()
        for k, (messages, tools, ids) in enumerate(steps, 1):
            t0 = time.perf_counter()
            text = fmt.render_prompt(messages, tools)
            t1 = time.perf_counter()
            full = tokenizer(text, add_special_tokens=False)["input_ids"]
            t2 = time.perf_counter()
            (inc,) = encode_prompts(fmt, [state], [text])
            t3 = time.perf_counter()
            if inc != full or ids != full:
                raise SystemExit(f"{entry.id} step {k}: incremental ids differ from the whole text's")
            if args.check:
                again = tokenizer.apply_chat_template(messages, tools=tools or None, add_generation_prompt=True, tokenize=False)
                if tokenizer.encode(again, add_special_tokens=False) != ids:
                    raise SystemExit(f"{entry.id} step {k}: ids differ from a full re-render")
                checked += 1
            render.setdefault(k, []).append(t1 - t0)
            whole.setdefault(k, []).append(t2 - t1)
            incremental.setdefault(k, []).append(t3 - t2)
            tokens.setdefault(k, []).append(len(full))
    wall = time.perf_counter() - start

    def ms(d: dict[int, list[float]], k: int) -> float:
        return 1000 * statistics.median(d[k])

    name = "qwen3" if args.qwen3 else "tiny"
    steps_total = sum(len(v) for v in whole.values())
    print(f"BFCL multi-turn gold replays: {len(entries)} entries, {steps_total} steps (each call x{args.repeat}), {name} tokenizer, "
          f"bfcl_default native ({wall:.1f} s)")
    print(f"{'step':>5} {'entries':>7} {'tokens':>7} {'render ms':>9} {'whole ms':>9} {'incr ms':>9} {'whole/incr':>10}")
    for k in MARKS:
        if k in whole:
            print(f"{k:5d} {len(whole[k]):7d} {statistics.median(tokens[k]):7.0f} {ms(render, k):9.3f} {ms(whole, k):9.3f} "
                  f"{ms(incremental, k):9.3f} {ms(whole, k) / ms(incremental, k):9.1f}x")
    tot = {label: sum(map(sum, d.values())) for label, d in (("render", render), ("whole", whole), ("incremental", incremental))}
    print(f"total: render {tot['render']:.2f} s, tokenise whole {tot['whole']:.2f} s, incremental {tot['incremental']:.2f} s "
          f"({tot['whole'] / tot['incremental']:.1f}x)")
    if args.check:
        print(f"checked: {checked} steps equal a full re-render by the chat template")


if __name__ == "__main__":
    main()
