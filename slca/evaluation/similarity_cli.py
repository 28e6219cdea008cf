"""`slca data similarity A B`: argparse only at import (slca.evaluation.similarity does the work when it runs).

It reads BFCL's data, so it lives in the evaluation layer and the command line adds it to `slca data`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

# flag -> SimilarityOptions field
_FLAGS = {"encoder": "encoder", "text": "text", "max_prompts": "max_prompts", "seed": "seed", "batch_size": "batch_size",
          "max_seq_length": "max_seq_length", "device": "device"}


def cmd_similarity(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from slca.config.similarity import SimilarityOptions
    from slca.data.errors import DataInputError, one_line
    from slca.evaluation.similarity import similarity
    from slca.fileio import atomic_write_text

    fields = {field: getattr(args, flag) for flag, field in _FLAGS.items() if getattr(args, flag) is not None}
    try:
        opts = SimilarityOptions(**fields)
    except ValidationError as exc:
        e = exc.errors()[0]
        flag = "--" + str(e["loc"][0]).replace("_", "-") if e.get("loc") else "options"
        raise DataInputError(one_line(f"{flag}: {e['msg']} (got {e.get('input')!r})")) from None

    def report_bad(line: str) -> None:  # stderr: stdout may be --json
        print(f"slca data similarity: skipped {line}", file=sys.stderr)

    report = similarity(args.a, args.b, opts, progress=not args.no_progress, on_bad=report_bad)
    if args.out:
        atomic_write_text(args.out, json.dumps(report.as_dict(), indent=2, allow_nan=False) + "\n")
    if args.json:
        print(json.dumps(report.as_dict(), indent=2, allow_nan=False))
    else:
        print(report.table())
    return 0


def add_command(data_sub: Any, guarded: Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]) -> None:
    """Add `similarity` to the `slca data` sub-commands (failures reported by `guarded`, as every data command's)."""
    p = data_sub.add_parser(
        "similarity", help="mean pairwise cosine similarity of two prompt sets, across and within (Table 7)",
        description="Embed the prompts of A and B with a local sentence-transformers model and print the mean (and std) cosine "
        "similarity over every pair across A and B, within A and within B (a prompt with itself left out). A and B are split "
        "files or BFCL categories: bfcl, bfcl:simple,multiple, bfcl_multi_turn (all four multi-turn categories), bfcl_multi_turn:base.")
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("--encoder", required=True, metavar="DIR", help="local sentence-transformers model directory")
    p.add_argument("--text", choices=["user_turns", "first_user"], default=None, help="text per prompt (default user_turns: every user message)")
    p.add_argument("--max-prompts", dest="max_prompts", type=int, default=None,
                   help="embed at most this many prompts per set, drawn uniformly without replacement (default: all)")
    p.add_argument("--seed", type=int, default=None, help="seed of that draw (default 0)")
    p.add_argument("--batch-size", dest="batch_size", type=int, default=None, help="prompts per encoder batch (default 64)")
    p.add_argument("--max-seq-length", dest="max_seq_length", type=int, default=None, help="tokens per prompt read at most (default: the encoder's)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default=None)
    p.add_argument("--out", default=None, metavar="FILE", help="also write the JSON record here (atomically)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=guarded(cmd_similarity))
