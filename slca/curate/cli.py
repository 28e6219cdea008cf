"""`slca data curate` (formerly `slca data filter`): argparse only at import (the command imports what it needs when it runs).

Every setting the pipeline stage reads from `train.curate` is a flag here; flags become overrides
of the composed spec (`--spec FILE` or conf/ defaults, plus OVERRIDE arguments), so the rollout,
simulator and reward settings are the training ones and a bad value is refused at composition.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

KEEP_CHOICES = ("mixed", "not_all_correct", "not_all_wrong")
OLD_NAME = "filter"  # the command's name before "filter" came to mean only the online RL filter
USAGE_EXIT = 2  # as argparse's usage errors
DEFAULT_CACHE = ".cache/slca/curate"


def _turn_range(text: str) -> tuple[int, int]:
    lo, sep, hi = text.partition("-")
    if not sep or not lo.strip().isdigit() or not hi.strip().isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a range A-B of whole numbers (e.g. 2-6)")
    return int(lo), int(hi)


def _overrides(args: argparse.Namespace) -> list[str]:
    """The flags as spec overrides (flags left unset keep the spec's values)."""
    out = []
    for flag, path in (("rollouts", "train.curate.rollouts"), ("keep", "train.curate.keep"),
                       ("max_gold_calls", "train.curate.max_gold_calls"), ("batch_prompts", "train.curate.batch_prompts"),
                       ("seed", "run.seed")):
        value = getattr(args, flag)
        if value is not None:
            out.append(f"{path}={value}")
    if args.turns is not None:
        out += [f"train.curate.min_turns={args.turns[0]}", f"train.curate.max_turns={args.turns[1]}"]
    return out


def spec_backbone_dir(spec: Any) -> str:
    """The spec's backbone as the pipeline builds it (the tiny one from the spec's SFT corpus, cached)."""
    from pathlib import Path

    from transformers.utils import logging as hf_logging

    from slca.data.io import read_rows
    from slca.data.synth import ensure_synthetic
    from slca.models.backbones import backbone_dir

    hf_logging.disable_progress_bar()  # the build's own bar would garble curation's
    sft = getattr(spec.data, "sft_path", None) or ensure_synthetic(spec.data).sft
    return backbone_dir(spec.backbone, lambda: read_rows(Path(sft).resolve()))


def cmd_curate(args: argparse.Namespace) -> int:
    from slca.config.compose import compose_spec
    from slca.config.io import load_spec
    from slca.curate.policy import resolve_policy
    from slca.curate.run import OWNED_FILES, curate_file
    from slca.data.outputs import check_out_dir, check_work_dir

    overrides = [*args.overrides, *_overrides(args)]
    spec = load_spec(args.spec, overrides) if args.spec else compose_spec(overrides)
    check_out_dir(args.out, [args.input], OWNED_FILES)  # before a backbone is built or a model loaded
    check_work_dir(args.cache, "--cache")

    def report_reject(_index: int, errors: list[Any], _row: Any) -> None:  # stderr: stdout may be --json
        for error in errors:
            print(f"slca data curate: skipped {error}", file=sys.stderr)

    policy = resolve_policy(spec, args.policy, backbone_dir=lambda: spec_backbone_dir(spec))
    funnel = curate_file(args.input, args.out, spec=spec, policy=policy, cache_dir=args.cache, progress=not args.no_progress,
                         on_error=args.on_error, on_reject=report_reject)
    if args.json:
        print(json.dumps(funnel.as_dict(), indent=2))
    else:
        print(funnel.table())
        print(f"{args.out}: kept {funnel.kept:,} of {funnel.rows_in:,} prompts ({funnel.keep}, {funnel.rollouts_per_prompt} rollouts each)")
    return 0


def add_command(sub: Any, guarded: Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]) -> None:
    """Add `curate` to the `slca data` sub-commands, and its old name as a one-line refusal naming it."""
    f = sub.add_parser("curate", help="keep the RL prompts a policy can learn from (k rollouts each) + funnel report",
                       description="Roll every prompt of a verl-format RL parquet out k times with MODEL (same rollout loop, "
                                   "simulator and reward as training) and keep those whose outcomes match --keep.")
    f.add_argument("input", help="RL-split parquet (verl format)")
    f.add_argument("overrides", nargs="*", default=[], metavar="OVERRIDE", help="spec overrides, before or after the flags, e.g. reward=exact_match simulator=replay")
    f.add_argument("--out", required=True, help="output directory (rl.parquet + funnel.json), replaced as a whole at the end; "
                                                "must be new, empty or an earlier curate output")
    f.add_argument("--policy", required=True, metavar="MODEL",
                   help="a run directory (its newest policy), a model directory, `backbone` (the spec's), or an "
                        "OpenAI-compatible endpoint URL (http://host:8000/v1; settings from eval.endpoint)")
    f.add_argument("--rollouts", type=int, default=None, metavar="K", help="rollouts per prompt (default: train.curate.rollouts)")
    f.add_argument("--keep", choices=KEEP_CHOICES, default=None, help="which outcome patterns to keep (default: train.curate.keep)")
    f.add_argument("--turns", type=_turn_range, default=None, metavar="A-B", help="keep prompts with A..B user + assistant messages")
    f.add_argument("--max-gold-calls", dest="max_gold_calls", type=int, default=None, metavar="N",
                   help="drop prompts whose gold answer needs more than N calls")
    f.add_argument("--batch-prompts", dest="batch_prompts", type=int, default=None, metavar="B", help="prompts per generation batch")
    f.add_argument("--seed", type=int, default=None, help="sampling seed (default: run.seed); the same seed keeps the same prompts")
    f.add_argument("--spec", metavar="FILE", help="a saved spec.yaml or experiment overlay for the rollout, simulator and reward settings")
    f.add_argument("--cache", default=DEFAULT_CACHE, metavar="DIR", help=f"outcome cache: an interrupted curation continues, a rerun is free (default {DEFAULT_CACHE})")
    f.add_argument("--on-error", dest="on_error", choices=["fail", "skip"], default="fail",
                   help="a row that fails the RL schema stops the command (fail) or is dropped as invalid_row and named on stderr (skip)")
    f.add_argument("--no-progress", dest="no_progress", action="store_true", help="no progress bar")
    f.add_argument("--json", action="store_true", help="print the funnel as JSON")
    f.set_defaults(func=guarded(cmd_curate))
    # No prefix characters: every argument after the old name is a plain word, so any command line is refused the same way.
    old = sub.add_parser(OLD_NAME, add_help=False, prefix_chars="\0")
    old.add_argument("rest", nargs="*")
    old.set_defaults(func=_renamed)


def _renamed(_args: argparse.Namespace) -> int:
    print(f"slca data {OLD_NAME}: renamed to slca data curate (see slca data curate --help)", file=sys.stderr)
    return USAGE_EXIT
