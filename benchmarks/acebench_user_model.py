"""ACEBench's agent_multi_turn offline: a local model plays the user, served by slca's own policy
server (the OpenAI-compatible endpoint τ² evaluation serves its agent with), and `slca eval` runs the
category against it through `eval.acebench.user`, as it would against gpt-4o.

The user model defaults to the untrained SmolLM2-135M-Instruct backbone (`make real-models`), greedy,
`--user-tokens` a message; the agent is the spec's backbone (overrides go to `slca eval` as they are).
Prints the evaluation's table; the run stays in `--work`.

    .venv/bin/python benchmarks/acebench_user_model.py [--user-model DIR] [--user-tokens 64] [--threads 1] [--work DIR] [overrides...]
    e.g. ... backbone=smollm2-135m-instruct eval.limit=2 eval.max_tokens=96 eval.rollout.max_prompt_length=4096
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVED_NAME = "acebench-user"


def no_sft_rows() -> list:
    raise AssertionError("a converted GGUF backbone reads no SFT rows")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--user-model", help="the user's model directory (default: the SmolLM2-135M-Instruct backbone)")
    ap.add_argument("--user-tokens", type=int, default=64, help="tokens of one user message at most")
    ap.add_argument("--threads", type=int, default=1, help="torch threads of the user model (the agent's: backend.num_threads)")
    ap.add_argument("--work", type=Path, default=None, help="the evaluation's run directory (default: a temp dir)")
    ap.add_argument("overrides", nargs="*", help="slca eval overrides (the agent, limits, caps)")
    args = ap.parse_args()

    import torch

    from slca.config.compose import compose_spec
    from slca.evaluation.tau2.server import PolicyServer, Protocol, serve_policy
    from slca.models.backbones import backbone_dir
    from slca.models.load import load_backbone
    from slca.rollout import RolloutConfig, get_generator

    torch.set_num_threads(args.threads)
    user_dir = args.user_model or backbone_dir(compose_spec(["backbone=smollm2-135m-instruct"]).backbone, no_sft_rows)
    model, tokenizer = load_backbone(user_dir)
    model.eval()
    generator = get_generator("hf")(model, pad_token_id=tokenizer.pad_token_id)
    # The user's messages carry ACEBench's user prompt as their system turn: kept as sent ("dataset").
    policy = PolicyServer(generator, tokenizer, RolloutConfig(max_prompt_length=32768, max_response_length=args.user_tokens,
                                                              temperature=0.0), Protocol("native", "keep", "dataset", 0), SERVED_NAME)
    work = args.work or Path(tempfile.mkdtemp(prefix="slca-acebench-user-"))
    with serve_policy(policy) as url:
        argv = [sys.executable, "-P", "-m", "slca.cli", "eval", "eval.benchmark=acebench", "eval.categories=[agent_multi_turn]",
                "eval.system_prompts=[acebench_default]", f"eval.acebench.user={{base_url: {url}, model: {SERVED_NAME}}}",
                "logger=none", f"run.dir={work}", *args.overrides]
        start = time.perf_counter()
        code = subprocess.run(argv).returncode
        elapsed = time.perf_counter() - start
    print(f"user model: {user_dir} ({policy.requests} user messages); agent evaluated in {elapsed:.0f} s; run in {work}")
    if code:
        raise SystemExit(code)
    print((work / "eval" / "table.md").read_text())


if __name__ == "__main__":
    main()
