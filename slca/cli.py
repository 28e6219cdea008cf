"""`slca` command line: argument parsing, then the application (slca/app.py). Building the parser
imports nothing heavy: each command imports what it needs.

Every command runs inside the application's safety net (`slca.app.run_command`): an expected refusal
is one line on stderr, anything unexpected one line plus the path of a log holding the traceback
(`--debug` prints the traceback instead). Usage errors are one line as well.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, NoReturn

from slca.app import EXIT_DATA_ERROR, EXIT_REFUSED, Invocation, run_command

USAGE_EXIT = 2


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (the usage text is one `--help` away).

    A command that takes overrides reads its flags wherever they stand among them, as Hydra users
    type them (`slca run experiment=paper_slca --dry-run backend=verl`); argparse's own
    `parse_args` would stop the overrides at the first flag.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._intermixing = False  # set while parse_known_intermixed_args calls back into parse_known_args

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        # A sub-command's parser is reached through this method (argparse's sub-parser action calls it).
        # After `--` every argument is positional (a file named `-x.yaml`); Python 3.11's intermixed
        # parsing loses them there, and nothing after `--` is a flag to intermix anyway.
        if self._intermixing or "--" in (sys.argv[1:] if args is None else args) \
                or not any(action.dest == "overrides" for action in self._get_positional_actions()):
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False

    def error(self, message: str) -> NoReturn:
        one_line = " ".join(message.split())
        self.exit(USAGE_EXIT, f"{self.prog}: error: {one_line} (see {self.prog} --help)\n")


def _cmd_run(args: argparse.Namespace) -> int:
    from slca.config.compose import compose_spec
    from slca.config.io import dump_spec, load_spec
    from slca.launch.lookup import with_from_run_found

    if args.multirun:
        return _cmd_multirun(args)
    if args.from_snapshot:
        from slca.launch.snapshot import rerun_from_snapshot

        return rerun_from_snapshot(args.spec, args.invocation.argv)
    spec = load_spec(args.spec, args.overrides) if args.spec else compose_spec(args.overrides)
    spec = with_from_run_found(spec)
    if args.cfg == "job":
        print(dump_spec(spec), end="")
        return 0
    if args.dry_run:
        from slca.app import dry_run

        return dry_run(spec, args.invocation)
    from slca.app import run_here
    from slca.launch.base import get_launcher

    if not args.here and not get_launcher(spec.launcher.name).runs_single_in_process:
        from slca.launch.sweep import submit_one

        return submit_one(spec, argv=args.argv)
    return run_here(spec, args.invocation)


def _cmd_multirun(args: argparse.Namespace) -> int:
    from slca.launch.sweep import multirun_sweep, run_sweep

    if args.spec or args.cfg or args.dry_run:
        print("slca: run -m takes overrides only (no --spec, --cfg or --dry-run); write a sweep file for more", file=sys.stderr)
        return USAGE_EXIT
    sweep, extra, sweep_dir = multirun_sweep(args.overrides)
    return run_sweep(sweep, extra, sweep_dir, argv=args.argv, wait=args.wait)


def _cmd_sweep(args: argparse.Namespace) -> int:
    from slca.launch.grid import load_sweep_file
    from slca.launch.sweep import DEFAULT_ROOT, run_sweep

    sweep = load_sweep_file(Path(args.file))
    sweep_dir = Path(args.dir) if args.dir else DEFAULT_ROOT / sweep.name
    return run_sweep(sweep, args.overrides, sweep_dir, argv=args.argv, wait=args.wait, skip_cancelled=args.skip_cancelled)


def _cmd_results(args: argparse.Namespace) -> int:
    from slca.launch.lookup import resolve
    from slca.launch.results import print_table, write_results

    table, csv_path, md_path = write_results(resolve(args.sweep_dir), args.metric or None)
    print_table(table)
    print(f"slca results: wrote {csv_path} and {md_path}")
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    if args.compare:
        from slca.evaluation.compare import CompareError, compare
        from slca.launch.lookup import resolve

        if args.from_run or args.model or args.cfg or args.overrides:
            raise CompareError("slca eval --compare BASE RL reads two finished evaluations: it takes no --from, --model, --cfg or overrides")
        print(compare(*args.compare, find=lambda name: resolve(name, sweeps=False)), end="")
        return 0
    from slca.app import run_here
    from slca.config.io import dump_spec
    from slca.evaluation.command import eval_spec
    from slca.launch.lookup import resolve, with_from_run_found

    spec = with_from_run_found(eval_spec(args.from_run, args.model, args.overrides, find=lambda name: resolve(name, sweeps=False)))
    if args.cfg == "job":
        print(dump_spec(spec), end="")
        return 0
    return run_here(spec, args.invocation)


def _cmd_config_validate(args: argparse.Namespace) -> int:
    from slca.config.io import load_spec

    spec = load_spec(args.file, args.overrides)
    print(f"{args.file}: valid (experiment {spec.experiment})")
    return 0


def _cmd_config_groups(args: argparse.Namespace) -> int:
    from slca.config.compose import options
    from slca.config.spec import GROUPS

    for group in (*GROUPS, "experiment"):
        print(f"{group}: {', '.join(options(group))}")
    return 0


def _cmd_config_docs(args: argparse.Namespace) -> int:
    from slca.config.docs import run

    return run(args.write)


def _cmd_report(args: argparse.Namespace) -> int:
    from slca.launch.lookup import resolve
    from slca.report import build_report

    index = build_report(resolve(args.dir), Path(args.out) if args.out else None)
    print(f"slca report: wrote {index}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="slca",
        description="Compose, run and track RL experiments on tool-calling LLMs (SLCA-GRPO and baselines).",
    )
    parser.add_argument("--debug", action="store_true", help="on an unexpected error, print the traceback instead of logging it")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser(
        "run",
        help="compose a spec from conf/ and overrides, then run its stages",
        description="Compose conf/config.yaml with Hydra-style overrides (group=option, a.b=value, "
        "experiment=NAME), validate it, and run its stages in a run directory.",
    )
    run.add_argument("--cfg", choices=["job"], help="print the resolved spec and run nothing")
    run.add_argument("--dry-run", action="store_true", help="write what the backend would launch (verl config, LLaMA-Factory train YAML) into the run directory and print the command; train nothing")
    run.add_argument("--spec", metavar="FILE", help="re-run a saved spec.yaml, or compose an experiment overlay file")
    run.add_argument("-m", "--multirun", action="store_true", help="sweep every override given as key=a,b (a sweep directory under runs/sweeps/, or run.dir=DIR)")
    run.add_argument("--wait", action="store_true", help="with -m: return when every run has ended (SLURM jobs are polled)")
    run.add_argument("--here", action="store_true", help="run in this process whatever the spec's launcher (what a launched job runs)")
    run.add_argument("--from-snapshot", action="store_true",
                     help="with --spec RUN_DIR/spec.yaml: run it on the code snapshot the run recorded (its digest checked), not this checkout")
    run.add_argument("overrides", nargs="*", default=[], metavar="OVERRIDE", help="e.g. estimator=grpo train.rl.lr=1e-6")
    run.set_defaults(func=_cmd_run)

    sweep = sub.add_parser(
        "sweep",
        help="run a sweep file's grid (sweeps/NAME.yaml) with its launcher; again: skip finished runs, resubmit failed ones",
        description="Compose every run of the sweep file's grid, then run them (launcher=local: one after another in "
        "subprocesses) or submit them (launcher=slurm: one job array). The sweep directory holds each run's directory "
        "and a manifest of what was submitted.",
    )
    sweep.add_argument("file", metavar="SWEEP_FILE")
    sweep.add_argument("--dir", metavar="SWEEP_DIR", help="sweep directory (default runs/sweeps/<sweep name>)")
    sweep.add_argument("--wait", action="store_true", help="return when every run has ended (SLURM jobs are polled)")
    sweep.add_argument("--skip-cancelled", action="store_true", help="leave runs that `slca cancel` stopped (default: resubmit them)")
    sweep.add_argument("overrides", nargs="*", default=[], metavar="OVERRIDE", help="applied to every run, e.g. launcher=slurm launcher.partition=gpu")
    sweep.set_defaults(func=_cmd_sweep)

    results = sub.add_parser(
        "results",
        help="one table of a sweep's final metrics, mean ± std across seeds; unfinished runs listed with error and log",
        description="Collect every run's final metrics from a sweep directory, grouped by the swept keys (seeds averaged), "
        "print the table and write results.csv and results.md into the sweep directory.",
    )
    results.add_argument("sweep_dir", metavar="SWEEP_DIR")
    results.add_argument("--metric", action="append", metavar="PATTERN", help="only metrics matching this glob (repeatable), e.g. 'eval/rl/*'")
    results.set_defaults(func=_cmd_results)

    evaluate = sub.add_parser(
        "eval",
        help="evaluate a run's trained policies, a model directory or the backbone option over the eval grid",
        description="Evaluate in a run directory of its own (stages data and eval): the policies of --from RUN_DIR, the model in "
        "--model DIR, or else the backbone option untrained. Writes eval/results.json (with protocol cards) and eval/table.md.",
    )
    evaluate.add_argument("--from", dest="from_run", metavar="RUN_DIR", help="evaluate this run's sft and rl policies, under its spec")
    evaluate.add_argument("--model", metavar="DIR", help="evaluate this model directory (weights and tokenizer)")
    evaluate.add_argument("--cfg", choices=["job"], help="print the resolved spec and run nothing")
    evaluate.add_argument("--compare", nargs=2, metavar=("BASE", "RL"),
                          help="print two finished evaluations side by side (Table 5: base, after RL, difference, standard errors); "
                          "each a results.json or run directory, optionally PATH@LABEL")
    evaluate.add_argument("overrides", nargs="*", default=[], metavar="OVERRIDE", help="e.g. eval=protocol_grid eval.temperature=0.7 eval.limit=16")
    evaluate.set_defaults(func=_cmd_eval)

    config = sub.add_parser("config", help="inspect and validate specs")
    config_sub = config.add_subparsers(dest="config_command", metavar="ACTION")
    config_sub.required = True
    validate = config_sub.add_parser("validate", help="validate a spec.yaml or an experiment overlay file")
    validate.add_argument("file")
    validate.add_argument("overrides", nargs="*", default=[], metavar="OVERRIDE")
    validate.set_defaults(func=_cmd_config_validate)
    groups = config_sub.add_parser("groups", help="list config groups and their options")
    groups.set_defaults(func=_cmd_config_groups)
    docs = config_sub.add_parser("docs", help="print the config reference (docs/config.md) generated from the typed models")
    docs.add_argument("--write", action="store_true", help="write docs/config.md instead of printing it")
    docs.set_defaults(func=_cmd_config_docs)

    report = sub.add_parser(
        "report",
        help="write an HTML report (plots and tables) of a run or sweep directory",
        description="Write index.html and its PNG plots for a run directory, or for every run directory "
        "below a sweep directory (one line per run on each plot).",
    )
    report.add_argument("dir", metavar="RUN_OR_SWEEP_DIR")
    report.add_argument("--out", metavar="DIR", help="report directory (default RUN_OR_SWEEP_DIR/report); replaced as a whole")
    report.set_defaults(func=_cmd_report)

    from slca.curate.cli import add_command as add_curate
    from slca.data.cli import guarded, register as register_data
    from slca.launch.commands import register as register_launch

    register_launch(sub)  # status, logs, cancel, runs
    from slca.evaluation.similarity_cli import add_command as add_similarity

    data_sub = register_data(sub)
    add_curate(data_sub, guarded)  # `slca data curate` is the curate stage's
    add_similarity(data_sub, guarded)  # `slca data similarity` reads BFCL's data: the evaluation layer's
    return parser


def _command_refusals() -> dict[type[BaseException], int]:
    """The refusals of the commands only the command line runs (sweeps, reports), beside the application's."""
    from slca.launch.base import SweepError
    from slca.report import ReportInputError

    return {SweepError: EXIT_REFUSED, ReportInputError: EXIT_DATA_ERROR}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `--debug` is also accepted after the command (`slca run --debug ...`), where users type it.
    invocation = Invocation(argv, debug="--debug" in argv)

    def command() -> int:
        args = build_parser().parse_args([a for a in argv if a != "--debug"])
        args.argv = invocation.command_line
        args.invocation = invocation
        return int(args.func(args) or 0)

    return run_command(invocation, command, _command_refusals).code


if __name__ == "__main__":
    sys.exit(main())
