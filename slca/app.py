"""The application entry shared by the command line (slca/cli.py) and a launched job (slca/launch/job.py).

Every command runs inside one safety net (`run_command`): an expected refusal (bad spec, bad data row,
a run directory that is locked or cannot be resumed) is one line on stderr; anything unexpected is one
line too, plus the path of a log holding the traceback (`debug` prints the traceback instead). The
caller gets an `Outcome`: the exit code and that line, so a job records why its run failed without
reading its own stderr. Importing this module imports nothing heavy: each step imports what it needs.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from slca.config.spec import Spec
    from slca.pipeline import StageOutcome

EXIT_SPEC_ERROR = 2
EXIT_STAGE_UNAVAILABLE = 3
EXIT_REFUSED = 4  # the run directory is locked, or a stage's inputs or records are unusable
EXIT_DATA_ERROR = 1  # as the data commands report a bad row
EXIT_INTERNAL = 70  # an unexpected error (sysexits EX_SOFTWARE)
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a reader that closed the pipe
LOG_DIR = Path(".cache/slca/logs")

Refusals = Mapping[type[BaseException], int]


@dataclass
class Invocation:
    """One slca command as the safety net sees it.

    `argv`: what followed `slca` (it heads the log of an unexpected error and the run's provenance).
    `log_dir`: where that log goes; a command that opens a run directory moves it beside the run.
    """

    argv: list[str]
    debug: bool = False
    log_dir: Path = field(default=LOG_DIR)

    @property
    def command_line(self) -> list[str]:
        return ["slca", *self.argv]


@dataclass(frozen=True)
class Outcome:
    """How a command ended: its exit code and the one line printed on stderr for a refusal, an
    unexpected error, an interrupt or SIGTERM ("" when it succeeded or returned its own exit code)."""

    code: int
    error: str = ""


def _refusals() -> dict[type[BaseException], int]:
    """Refusals that are the user's to fix: exception type -> exit code (imported only when needed).
    Checked in order: StageMismatch is a RunError with its own code."""
    from slca.config.errors import SpecError
    from slca.data.errors import DataInputError
    from slca.data.schemas import DataValidationError
    from slca.evaluation.benchmarks import BenchmarkDataError
    from slca.http import EndpointError
    from slca.runcontext import RunError, StageMismatch
    from slca.runlock import RunLocked

    return {SpecError: EXIT_SPEC_ERROR, StageMismatch: EXIT_SPEC_ERROR, RunError: EXIT_REFUSED, RunLocked: EXIT_REFUSED,
            DataValidationError: EXIT_DATA_ERROR, DataInputError: EXIT_DATA_ERROR, BenchmarkDataError: EXIT_DATA_ERROR,
            EndpointError: EXIT_REFUSED}


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def write_log(directory: Path, argv: list[str]) -> Path:
    """The current exception's traceback in `directory/<UTC stamp>-<pid>.log` (a temp dir if that fails)."""
    from slca.fileio import atomic_write_text

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    text = f"slca {' '.join(argv)}\n{traceback.format_exc()}"
    for folder in (directory, Path(tempfile.gettempdir()) / "slca-logs"):
        try:
            return atomic_write_text(folder / f"{stamp}-{os.getpid()}.log", text, fsync=False)
        except OSError:
            continue
    raise OSError("no writable log directory")


def _unexpected(exc: BaseException, invocation: Invocation) -> Outcome:
    what = f"{type(exc).__name__}: {one_line(exc)}"[:500]
    if invocation.debug:
        traceback.print_exc()
        return Outcome(EXIT_INTERNAL, what)  # the traceback's last line
    try:
        log = write_log(invocation.log_dir, invocation.argv)
    except OSError as log_error:
        return _say(EXIT_INTERNAL, f"slca: unexpected error: {what} (no log written: {log_error}; rerun with --debug for the traceback)")
    return _say(EXIT_INTERNAL, f"slca: unexpected error: {what} (traceback in {log}; rerun with --debug to print it)")


def _say(code: int, line: str) -> Outcome:
    print(line, file=sys.stderr)
    return Outcome(code, line)


def run_command(invocation: Invocation, command: Callable[[], int], refusals: Callable[[], Refusals] | None = None) -> Outcome:
    """Run `command` inside the safety net. `refusals` adds the caller's own refusal types (exception
    type -> exit code) to the application's; SIGTERM ends the command as Ctrl-C does (cleanups run,
    one line, exit 143)."""
    from slca.signals import EXIT_TERMINATED, Terminated, terminate_raises

    with terminate_raises():
        try:
            return Outcome(int(command() or 0))
        except KeyboardInterrupt:
            return _say(EXIT_INTERRUPTED, "slca: interrupted")
        except Terminated:
            return _say(EXIT_TERMINATED, "slca: terminated")
        except BrokenPipeError:
            # The reader went away (`slca config groups | head`): not an error, and nowhere left to say anything.
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit-time flush is quiet too
            except (OSError, ValueError):
                pass
            return Outcome(EXIT_BROKEN_PIPE)
        except Exception as exc:  # noqa: BLE001 - the one place every error becomes one line
            try:
                expected = {**_refusals(), **(refusals() if refusals else {})}
            except Exception:  # noqa: BLE001 - a broken install must still end in one line and a log
                expected = {}
            for kind, code in expected.items():
                if isinstance(exc, kind):
                    return _say(code, f"slca: {one_line(exc)}")
            return _unexpected(exc, invocation)


def _print_outcomes(outcomes: Iterable[StageOutcome]) -> None:
    """The run's closing table of stages: status, wall time and detail."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title="slca run")
    for column in ("stage", "status", "seconds", "detail"):
        table.add_column(column)
    for outcome in outcomes:
        table.add_row(outcome.stage, outcome.status, f"{outcome.seconds:.1f}", outcome.detail)
    Console().print(table)


def run_here(spec: Spec, invocation: Invocation, *, dry_run: bool = False) -> int:
    """Run the spec's stages in this process, whatever its launcher; an unexpected error is logged beside the run."""
    from slca.pipeline import open_run_dir, run_pipeline
    from slca.tracking import open_tracker

    with open_run_dir(spec, argv=invocation.command_line) as (spec, run_dir, number):
        invocation.log_dir = run_dir / "logs"
        print(f"slca: run directory {run_dir}")
        with open_tracker(run_dir, spec.logger, spec_dict=spec.model_dump(mode="json"), run_name=run_dir.name) as tracker:
            outcomes = run_pipeline(spec, run_dir, tracker, invocation=number, dry_run=dry_run)
    _print_outcomes(outcomes)
    if any(o.status == "unavailable" for o in outcomes):
        return EXIT_STAGE_UNAVAILABLE
    return 0


def dry_run(spec: Spec, invocation: Invocation) -> int:
    """One meaning for every backend: everything the run needs written into its directory, the exact
    command printed, exit 0; nothing trains.

    A backend launched as a whole (verl) composes its config without the pipeline; one whose stages
    honour `RunContext.dry_run` (LLaMA-Factory) runs the pipeline up to that stage; one that launches
    nothing of its own (local) gets its run directory and the slca command that runs it."""
    from slca.backends.contract import get_backend
    from slca.pipeline import open_run_dir

    backend = get_backend(spec.backend.name)
    launch = backend.dry_run_fn()
    if launch is not None:
        return int(launch(spec, open_run_dir, argv=invocation.command_line))
    if backend.dry_run_stages:
        return run_here(spec, invocation, dry_run=True)
    with open_run_dir(spec, argv=invocation.command_line) as (_, run_dir, _):
        print(f"slca: run directory {run_dir}")
    print(shlex.join(["slca", "run", "--spec", str(run_dir / "spec.yaml")]))
    return 0


def run_launched_spec(spec_path: Path) -> Outcome:
    """What a launched job executes: `slca run --here --spec SPEC_PATH`, in this process."""
    invocation = Invocation(["run", "--here", "--spec", str(spec_path)])

    def command() -> int:
        from slca.config.io import load_spec

        return run_here(load_spec(spec_path), invocation)

    return run_command(invocation, command)
