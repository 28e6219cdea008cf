"""Time a whole protocol grid of BFCL single-turn through `slca eval`'s path against a local scripted endpoint.

The grid of the efficiency paper's fragility study: 2 template constructions x 2 thinking settings x 3
system prompts (bfcl_default, stronger, none) x 3 seeds (temperature 0.7, so seeds are not collapsed),
evaluated by `slca.evaluation.run.evaluate_model` (what `slca eval` runs after start-up) with the `openai`
generator. The endpoint is benchmarks/bfcl_openai.py's scripted completions server (every entry answered
with its gold). Printed: the grid's wall time; per (cell, seed) the wall time from the end of the previous
batch's requests to the end of its own (its rendering, tokenising and requests, and the previous batch's
scoring) and its entries/s; then the bare-request ceiling: every prompt the grid sent, posted again
straight to the server at the same concurrency.

    .venv/bin/python benchmarks/eval_grid.py [--limit 40] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bfcl_openai import raw_post, serve, tiny_tokenizer  # noqa: E402

from slca.config.compose import compose_spec  # noqa: E402
from slca.evaluation.bfcl.data import ORDER  # noqa: E402
from slca.evaluation.bfcl.run import load_entries  # noqa: E402
from slca.evaluation.generators import build_generator  # noqa: E402
from slca.evaluation.run import evaluate_model  # noqa: E402


class Timed:
    """The generator, noting when each batch (one per cell and seed in single-turn) finishes."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.ends: list[tuple[float, int]] = []

    def generate(self, prompt_token_ids: Any, **kwargs: Any) -> Any:
        out = self.inner.generate(prompt_token_ids, **kwargs)
        self.ends.append((time.perf_counter(), len(prompt_token_ids)))
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=40, help="entries per category (null: all, about 155k requests)")
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args()
    limit = args.limit or None
    entries = load_entries(limit)
    tokenizer = tiny_tokenizer(entries)
    server, prompts = serve(entries)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    spec = compose_spec([
        "eval.benchmark=bfcl", "eval.generator=openai", "eval.constructions=[native,context]", "eval.thinking=[keep,drop]",
        "eval.system_prompts=[bfcl_default,stronger,none]", "eval.seeds=[0,1,2]", "eval.temperature=0.7",
        "eval.rollout.max_prompt_length=200000", "eval.rollout.max_response_length=8192", f"eval.limit={limit or 'null'}",
        f"eval.endpoint.base_url={url}", "eval.endpoint.model=bfcl-gold", f"eval.endpoint.max_concurrency={args.concurrency}",
        "logger=none"])
    gen = Timed(build_generator(spec.eval, "bfcl-gold", tokenizer, "cpu"))
    start = time.perf_counter()
    result = evaluate_model(spec, label="scripted-gold", model_dir=str(Path(__file__).parent), generator=gen,
                            tokenizer=tokenizer, split_path=None, device="cpu", progress=False)
    wall = time.perf_counter() - start

    sent = list(prompts)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(args.concurrency) as pool:
        list(pool.map(lambda p: raw_post(url, p), sent))
    raw_s = time.perf_counter() - t0
    server.shutdown()

    batches = [(cell, seed) for cell in result.cells for seed in cell.seeds]
    assert len(batches) == len(gen.ends), (len(batches), len(gen.ends))
    print(f"BFCL single-turn grid: {len(entries)} entries in {len(ORDER)} categories x {len(result.cells)} cells x "
          f"{len(result.cells[0].seeds)} seeds = {len(sent)} requests, openai generator, concurrency {args.concurrency}")
    print(f"  {'cell':28s} {'seed':>4s} {'accuracy':>8s} {'s':>7s} {'entries/s':>9s}")
    previous = start
    for (cell, seed), (end, n) in zip(batches, gen.ends):
        accuracy = cell.per_seed[list(cell.seeds).index(seed)]["accuracy"]
        print(f"  {cell.cell.label:28s} {seed:4d} {accuracy:8.4f} {end - previous:7.2f} {n / (end - previous):9.1f}")
        previous = end
    print(f"grid wall time : {wall:7.2f} s  {len(sent) / wall:8.1f} entries/s")
    print(f"bare requests  : {raw_s:7.2f} s  {len(sent) / raw_s:8.1f} entries/s  (grid / bare = {wall / raw_s:.2f}x)")


if __name__ == "__main__":
    main()
