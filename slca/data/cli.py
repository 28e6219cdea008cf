"""`slca data validate | convert | prepare | synth | stats | curate`.

`register(subparsers)` adds the `data` command to the top-level parser (slca/cli.py, which also adds
the curate stage's `curate`); importing this module is cheap (argparse only): every command imports
what it needs when it runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any


def _print(obj: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(obj, indent=2, default=str))


def cmd_validate(args: argparse.Namespace) -> int:
    from slca.data.validate import validate_split_file

    shown = 0

    def show(err: Any) -> None:  # the per-row listing is the command's output, so stdout
        nonlocal shown
        if shown < args.max_report and not args.json:
            print(str(err))
        shown += 1

    rep = validate_split_file(args.file, args.split, args.on_error, out=args.out, on_row_error=show)
    summary = rep.as_dict()
    if args.json:
        _print(summary, True)
    else:
        bad = rep.n_rejected > 0
        print(f"{args.file}: {summary['rows_in']:,} rows in, {summary['rows_out']:,} valid, "
              f"{summary['rows_rejected']:,} rejected" + (f" (by field: {summary['errors_by_field']})" if bad else ""))
        if rep.rejects_path is not None and bad:
            print(f"rejects written to {rep.rejects_path}")
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    from slca.data.convert import convert_file

    rep = convert_file(args.input, args.output, layout=args.layout, on_error=args.on_error, dataset_name=args.name)
    d = rep.as_dict()
    if args.json:
        _print(d, True)
    else:
        print(f"{args.output}: {d['rows_in']:,} in, {d['rows_out']:,} out, {d['rows_rejected']:,} rejected; "
              f"{d['calls']:,} calls, {d['parallel_turns']:,} parallel turns, {d['dropped_texts']:,} texts dropped, "
              f"{d['merged_turns']:,} turns merged")
    return 0


def cmd_prepare(args: argparse.Namespace) -> int:
    from slca.data.prepare import PrepareOptions, prepare

    opts = PrepareOptions(seed=args.seed, eval_size=args.eval_size, rl_fraction=args.rl_fraction,
                          include_irrelevant=not args.no_irrelevant, system_style=args.system,
                          keep_original=not args.no_original)
    funnel = prepare(args.input, args.out, opts=opts, on_error=args.on_error)
    if args.json:
        _print(funnel.as_dict(), True)
    else:
        print(funnel.table())
    return 0


def cmd_synth(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from slca.config.groups.data import SyntheticData
    from slca.data.errors import DataInputError, one_line
    from slca.data.synth import limit_problem, synthesize_dir

    fields: dict[str, Any] = {"seed": args.seed}
    for k in ("n_sft", "n_rl", "n_eval", "n_tools"):
        if getattr(args, k) is not None:
            problem = limit_problem(k, getattr(args, k))
            if problem is not None:
                raise DataInputError(f"--{k.replace('_', '-')}: {problem}")
            fields[k] = getattr(args, k)
    try:
        cfg = SyntheticData(**fields)
    except ValidationError as exc:
        e = exc.errors()[0]
        flag = "--" + str(e["loc"][0]).replace("_", "-") if e.get("loc") else "options"
        raise DataInputError(one_line(f"{flag}: {e['msg']} (got {e.get('input')!r})")) from None
    paths = synthesize_dir(cfg, args.out)
    if args.json:
        _print(paths.as_dict(), True)
    else:
        for k, v in paths.as_dict().items():
            print(f"{k:>9}  {v}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from slca.data.io import read_rows
    from slca.data.outputs import check_inputs
    from slca.data.stats import collect

    check_inputs([args.file])
    st = collect(read_rows(args.file, allow_empty=False), args.split)
    if args.json:
        _print(st.as_dict(), True)
    else:
        print(st.table())
    return 0


def _refusal(args: argparse.Namespace, exc: BaseException) -> str | None:
    """The one line for an expected failure (bad input, unusable path), or None when unexpected."""
    from slca.data.errors import DataInputError, one_line, os_error
    from slca.data.schemas import DataValidationError

    if isinstance(exc, DataValidationError):
        src = getattr(args, "input", None)  # validate already names its file
        return one_line(f"{src}: {exc}" if src is not None else str(exc))
    if isinstance(exc, DataInputError):
        return one_line(str(exc))
    if isinstance(exc, OSError):
        return str(os_error(exc))
    return None


def guarded(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Expected failures (bad rows, unreadable input, unusable output path, bad option) end as one
    stderr line naming the file and exit 1. Anything else is a bug: it propagates to the `slca`
    safety net (slca.app.run_command), which prints one line plus the path of the saved traceback.
    """
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except Exception as exc:  # noqa: BLE001 - sorted into expected (one line here) or re-raised
            line = _refusal(args, exc)
            if line is None:
                raise
            print(f"slca data {args.data_command}: {line}", file=sys.stderr)
            return 1

    return run


def register(subparsers: Any) -> Any:
    """Add `data` and its sub-commands, each setting `func(args) -> exit code`; returns the sub-command
    action, where the command line adds the curate stage's `curate`."""
    p = subparsers.add_parser("data", help="validate, convert, derive and synthesise datasets")
    sub = p.add_subparsers(dest="data_command", required=True, metavar="COMMAND")

    v = sub.add_parser("validate", help="check every row against a split schema")
    v.add_argument("file")
    v.add_argument("--split", choices=["sft", "rl", "eval"], required=True)
    v.add_argument("--on-error", choices=["fail", "skip"], default="fail",
                   help="fail: list every bad row, write nothing, exit 1 if any; skip: keep going and write "
                        "a rejects file (beside --out, else <file>.rejects.jsonl)")
    v.add_argument("--out", default=None, help="write the valid rows here (parquet/jsonl)")
    v.add_argument("--max-report", type=int, default=50, help="bad rows listed on stdout (stderr gets one summary line)")
    v.add_argument("--json", action="store_true")
    v.set_defaults(func=guarded(cmd_validate))

    c = sub.add_parser("convert", help="SFT parquet/jsonl → LLaMA-Factory sharegpt file + dataset_info.json")
    c.add_argument("input")
    c.add_argument("output", help=".jsonl (streamed) or .json (array); not the input, not dataset_info.json")
    c.add_argument("--to", dest="target", choices=["llamafactory"], default="llamafactory")
    c.add_argument("--layout", choices=["llamafactory", "reference"], default="llamafactory",
                   help="reference: the reference materialiser's layout, for comparison")
    c.add_argument("--name", default=None, help="dataset_info.json entry name (default: output stem)")
    c.add_argument("--on-error", choices=["fail", "skip"], default="fail")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=guarded(cmd_convert))

    pr = sub.add_parser("prepare", help="trajectories → eval / sft / sft_full / rl splits + funnel report")
    pr.add_argument("input")
    pr.add_argument("--out", required=True,
                    help="output directory, replaced as a whole when every split is written (a failure leaves "
                         "it untouched); must be new, empty or an earlier prepare output")
    pr.add_argument("--seed", type=int, default=0)
    pr.add_argument("--eval-size", type=int, default=4000,
                    help="trajectories carved for eval first (>= 0). Larger than the number of unique valid "
                         "trajectories is an error naming both numbers, never a silent clamp (default 4000, "
                         "sized for full Toucan: pass a smaller value for small inputs)")
    pr.add_argument("--rl-fraction", type=float, default=3 / 7,
                    help="share of the train trajectories that go to RL, in [0, 1] (default 3/7)")
    pr.add_argument("--system", choices=["source", "reference", "none"], default="source")
    pr.add_argument("--no-irrelevant", action="store_true", help="drop user turns that need no call")
    pr.add_argument("--no-original", action="store_true", help="do not store the source row in extra_info")
    pr.add_argument("--on-error", choices=["fail", "skip"], default="fail")
    pr.add_argument("--json", action="store_true")
    pr.set_defaults(func=guarded(cmd_prepare))

    s = sub.add_parser("synth", help="generate the synthetic Toucan-shaped splits")
    s.add_argument("--out", required=True,
                   help="output directory, replaced as a whole at the end; must be new, empty or an earlier synth output")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--n-sft", dest="n_sft", type=int, default=None, help="SFT conversations, 1 to 1,000,000")
    s.add_argument("--n-rl", dest="n_rl", type=int, default=None, help="RL prompts, 1 to 1,000,000")
    s.add_argument("--n-eval", dest="n_eval", type=int, default=None, help="eval prompts, 1 to 1,000,000")
    s.add_argument("--n-tools", dest="n_tools", type=int, default=None,
                   help="tools drawn from the catalogue, 1 to 29 (all of it); the manifest records what was used")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=guarded(cmd_synth))

    st = sub.add_parser("stats", help="the data card's summary table")
    st.add_argument("file")
    st.add_argument("--split", choices=["sft", "rl", "eval"], required=True)
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=guarded(cmd_stats))

    return sub
