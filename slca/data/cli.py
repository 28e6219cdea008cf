"""`slca data validate | convert | prepare | synth | stats`.

`register(subparsers)` adds the `data` command to the top-level parser; importing this module is
cheap (argparse only): every command imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def _print(obj: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(obj, indent=2, default=str))


def cmd_validate(args: argparse.Namespace) -> int:
    from slca.data.convert import RejectsWriter, rejects_path
    from slca.data.io import RowWriter, read_rows
    from slca.data.schemas import Validator

    shown = 0

    def report(idx: int, errs: list, row: Any) -> None:
        nonlocal shown
        for e in errs:
            if shown < args.max_report:
                print(str(e), file=sys.stderr)
            shown += 1
        if rejects is not None:
            rejects(idx, errs, row)

    out = args.out
    rejects = RejectsWriter(rejects_path(out) if out else f"{args.file}.rejects.jsonl") if args.on_error == "skip" else None
    # fail mode still scans the whole file so every bad row is listed; it just writes nothing
    v = Validator(args.split, "skip", on_reject=report)
    writer = RowWriter(out) if out else None
    try:
        for row in v(read_rows(args.file)):
            if writer is not None:
                writer.write(row)
    except BaseException:
        if writer is not None:
            writer.abort()
        if rejects is not None:
            rejects.close(keep=False)
        raise
    bad = v.report.n_rejected > 0
    if writer is not None:
        if bad and args.on_error == "fail":
            writer.abort()
        else:
            writer.close()
    if rejects is not None:
        rejects.close(keep=True)
    summary = v.report.as_dict()
    if args.json:
        _print(summary, True)
    else:
        print(f"{args.file}: {summary['rows_in']:,} rows in, {summary['rows_out']:,} valid, "
              f"{summary['rows_rejected']:,} rejected" + (f" (by field: {summary['errors_by_field']})" if bad else ""))
        if rejects is not None and bad:
            print(f"rejects written to {rejects.path}")
    return 1 if (bad and args.on_error == "fail") else 0


def cmd_convert(args: argparse.Namespace) -> int:
    from slca.data.convert import convert_file
    from slca.data.schemas import DataValidationError

    try:
        rep = convert_file(args.input, args.output, layout=args.layout, on_error=args.on_error, dataset_name=args.name)
    except DataValidationError as exc:
        print(f"convert failed: {exc}", file=sys.stderr)
        return 1
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
    from slca.data.schemas import DataValidationError

    opts = PrepareOptions(seed=args.seed, eval_size=args.eval_size, rl_fraction=args.rl_fraction,
                          include_irrelevant=not args.no_irrelevant, system_style=args.system,
                          keep_original=not args.no_original)
    try:
        funnel = prepare(args.input, args.out, opts=opts, on_error=args.on_error)
    except DataValidationError as exc:
        print(f"prepare failed: {exc}", file=sys.stderr)
        return 1
    if args.json:
        _print(funnel.as_dict(), True)
    else:
        print(funnel.table())
    return 0


def cmd_synth(args: argparse.Namespace) -> int:
    from slca.config.groups.data import SyntheticData
    from slca.data.synth import synthesize

    fields: dict[str, Any] = {"seed": args.seed}
    for k in ("n_sft", "n_rl", "n_eval", "n_tools"):
        if getattr(args, k) is not None:
            fields[k] = getattr(args, k)
    cfg = SyntheticData(**fields)
    paths = synthesize(cfg, args.out)
    if args.json:
        _print(paths.as_dict(), True)
    else:
        for k, v in paths.as_dict().items():
            print(f"{k:>9}  {v}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from slca.data.io import read_rows
    from slca.data.stats import collect

    st = collect(read_rows(args.file), args.split)
    if args.json:
        _print(st.as_dict(), True)
    else:
        print(st.table())
    return 0


def register(subparsers: Any) -> None:
    """Add `data` and its sub-commands; each sets `func(args) -> exit code`."""
    p = subparsers.add_parser("data", help="validate, convert, derive and synthesise datasets")
    sub = p.add_subparsers(dest="data_command", required=True)

    v = sub.add_parser("validate", help="check every row against a split schema")
    v.add_argument("file")
    v.add_argument("--split", choices=["sft", "rl", "eval"], required=True)
    v.add_argument("--on-error", choices=["fail", "skip"], default="fail",
                   help="fail: exit 1 if any row is bad; skip: keep going and write a rejects file")
    v.add_argument("--out", default=None, help="write the valid rows here (parquet/jsonl)")
    v.add_argument("--max-report", type=int, default=50, help="errors printed to stderr")
    v.add_argument("--json", action="store_true")
    v.set_defaults(func=cmd_validate)

    c = sub.add_parser("convert", help="SFT parquet/jsonl → LLaMA-Factory sharegpt file + dataset_info.json")
    c.add_argument("input")
    c.add_argument("output", help=".jsonl (streamed) or .json (array)")
    c.add_argument("--to", dest="target", choices=["llamafactory"], default="llamafactory")
    c.add_argument("--layout", choices=["llamafactory", "reference"], default="llamafactory",
                   help="reference: the reference materialiser's layout, for comparison")
    c.add_argument("--name", default=None, help="dataset_info.json entry name (default: output stem)")
    c.add_argument("--on-error", choices=["fail", "skip"], default="fail")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_convert)

    pr = sub.add_parser("prepare", help="trajectories → eval / sft / sft_full / rl splits + funnel report")
    pr.add_argument("input")
    pr.add_argument("--out", required=True)
    pr.add_argument("--seed", type=int, default=0)
    pr.add_argument("--eval-size", type=int, default=4000)
    pr.add_argument("--rl-fraction", type=float, default=3 / 7)
    pr.add_argument("--system", choices=["source", "reference", "none"], default="source")
    pr.add_argument("--no-irrelevant", action="store_true", help="drop user turns that need no call")
    pr.add_argument("--no-original", action="store_true", help="do not store the source row in extra_info")
    pr.add_argument("--on-error", choices=["fail", "skip"], default="fail")
    pr.add_argument("--json", action="store_true")
    pr.set_defaults(func=cmd_prepare)

    s = sub.add_parser("synth", help="generate the synthetic Toucan-shaped splits")
    s.add_argument("--out", required=True)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--n-sft", dest="n_sft", type=int, default=None)
    s.add_argument("--n-rl", dest="n_rl", type=int, default=None)
    s.add_argument("--n-eval", dest="n_eval", type=int, default=None)
    s.add_argument("--n-tools", dest="n_tools", type=int, default=None)
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_synth)

    st = sub.add_parser("stats", help="the data card's summary table")
    st.add_argument("file")
    st.add_argument("--split", choices=["sft", "rl", "eval"], required=True)
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_stats)


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (`python -m slca.data.cli data ...` or without the leading `data`)."""
    parser = argparse.ArgumentParser(prog="slca")
    register(parser.add_subparsers(dest="command", required=True))
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "data":
        argv = ["data", *argv]
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
