"""`slca` command line. Building the parser imports nothing heavy: each command imports what it needs."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Callable

EXIT_SPEC_ERROR = 2
EXIT_STAGE_UNAVAILABLE = 3


def _cmd_run(args: argparse.Namespace) -> int:
    from slca.config.compose import compose_spec
    from slca.config.errors import SpecError
    from slca.config.io import dump_spec, load_spec

    try:
        spec = load_spec(args.spec, args.overrides) if args.spec else compose_spec(args.overrides)
    except SpecError as exc:
        print(f"slca: {exc}", file=sys.stderr)
        return EXIT_SPEC_ERROR
    if args.cfg == "job":
        print(dump_spec(spec), end="")
        return 0
    if spec.launcher.name != "local":
        try:
            launcher = importlib.import_module(f"slca.launch.{spec.launcher.name}")
        except ModuleNotFoundError:
            print(f"slca: launcher '{spec.launcher.name}' is not available yet; use launcher=local", file=sys.stderr)
            return EXIT_STAGE_UNAVAILABLE
        return int(launcher.submit(spec, argv=sys.argv))
    return _run_local(spec)


def _run_local(spec) -> int:  # type: ignore[no-untyped-def]
    from slca.pipeline import StageMismatch, prepare_run_dir, run_pipeline
    from slca.reporting import print_outcomes
    from slca.tracking import open_tracker

    try:
        spec, run_dir = prepare_run_dir(spec, argv=sys.argv)
    except StageMismatch as exc:
        print(f"slca: {exc}", file=sys.stderr)
        return EXIT_SPEC_ERROR
    print(f"slca: run directory {run_dir}")
    with open_tracker(run_dir, spec.logger, spec_dict=spec.model_dump(mode="json"), run_name=run_dir.name) as tracker:
        outcomes = run_pipeline(spec, run_dir, tracker)
    print_outcomes(outcomes)
    if any(o.status == "unavailable" for o in outcomes):
        return EXIT_STAGE_UNAVAILABLE
    return 0


def _cmd_config_validate(args: argparse.Namespace) -> int:
    from slca.config.errors import SpecError
    from slca.config.io import load_spec

    try:
        spec = load_spec(args.file, args.overrides)
    except SpecError as exc:
        print(f"slca: {exc}", file=sys.stderr)
        return EXIT_SPEC_ERROR
    print(f"{args.file}: valid (experiment {spec.experiment})")
    return 0


def _cmd_config_groups(args: argparse.Namespace) -> int:
    from slca.config.compose import options
    from slca.config.spec import GROUPS

    for group in (*GROUPS, "experiment"):
        print(f"{group}: {', '.join(options(group))}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="slca",
        description="Compose, run and track RL experiments on tool-calling LLMs (SLCA-GRPO and baselines).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser(
        "run",
        help="compose a spec from conf/ and overrides, then run its stages",
        description="Compose conf/config.yaml with Hydra-style overrides (group=option, a.b=value, "
        "experiment=NAME), validate it, and run its stages in a run directory.",
    )
    run.add_argument("--cfg", choices=["job"], help="print the resolved spec and run nothing")
    run.add_argument("--spec", metavar="FILE", help="re-run a saved spec.yaml, or compose an experiment overlay file")
    run.add_argument("overrides", nargs="*", metavar="OVERRIDE", help="e.g. estimator=grpo train.rl.lr=1e-6")
    run.set_defaults(func=_cmd_run)

    config = sub.add_parser("config", help="inspect and validate specs")
    config_sub = config.add_subparsers(dest="config_command", metavar="ACTION")
    config_sub.required = True
    validate = config_sub.add_parser("validate", help="validate a spec.yaml or an experiment overlay file")
    validate.add_argument("file")
    validate.add_argument("overrides", nargs="*", metavar="OVERRIDE")
    validate.set_defaults(func=_cmd_config_validate)
    groups = config_sub.add_parser("groups", help="list config groups and their options")
    groups.set_defaults(func=_cmd_config_groups)

    for register in _plugin_registrars():
        register(sub)
    return parser


def _plugin_registrars() -> list[Callable[[argparse._SubParsersAction], None]]:
    """Sub-command groups owned by other packages (each module keeps its own imports lazy)."""
    registrars = []
    for module_name in ("slca.data.cli",):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:
            continue
        registrars.append(module.register)
    return registrars


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
