"""The commands that operate runs once launched: `slca status`, `slca logs`, `slca cancel`, `slca runs`
(docs/launch.md#operating-runs). Argument parsing here, the work in `overview`, `logs` and `cancel`."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from slca.launch.lookup import DEFAULT_ROOT
from slca.terminal import terminal_width as _width


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    s = int(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.4g}"


def _state(view: Any) -> str:
    return f"{view.state} (requeued {view.requeues}x)" if view.requeues else view.state


def _print_table(columns: list[Any], rows: list[list[str]]) -> None:
    from slca.launch.table import render

    text, dropped = render(columns, rows, _width())
    print(text)
    if dropped:
        print(f"(left out to fit {_width()} columns: {', '.join(dropped)}; --json has every field)")


def _cmd_status(args: argparse.Namespace) -> int:
    from slca.launch.lookup import resolve
    from slca.launch.overview import collect
    from slca.launch.table import Column

    root = Path(args.root)
    path = None if args.all or not args.target else resolve(args.target, root)
    views = collect(path, root)
    if args.json:
        print(json.dumps([asdict(v) for v in views], indent=1))
        return 0
    if not views:
        print(f"slca status: no runs under {path or root}")
        return 0
    counts: dict[str, int] = {}
    for v in views:
        counts[v.state] = counts.get(v.state, 0) + 1
    print(f"{path or root}: {len(views)} run(s): " + ", ".join(f"{n} {state}" for state, n in sorted(counts.items())))
    columns = [Column("run", 48, keep_end=True), Column("overrides", 40, drop=3), Column("launcher", 8, drop=4), Column("job", 14),
               Column("state", 24), Column("progress", 16), Column("last metric", 32, drop=2), Column("wall", 7, drop=5),
               Column("log", 60, keep_end=True, drop=6)]
    rows = []
    for v in views:
        name = f"{v.sweep}/{v.run}" if path is None and v.sweep else v.run
        where = f"{v.stage} {v.step}" if v.step is not None and v.step >= 0 else v.stage  # summary lines have step -1
        metric = f"{v.metric}={_number(v.value)}" if v.metric else ""
        rows.append([name, " ".join(v.overrides), v.launcher, v.job_id or "", _state(v), where, metric, _duration(v.wall_s), v.log])
    _print_table(columns, rows)
    for v in views:
        if v.detail and v.state not in ("finished",):
            print(f"{v.state} {v.run}: {v.detail}" + (f" (log {v.log})" if v.log else ""))
    return 0


def _cmd_runs(args: argparse.Namespace) -> int:
    from slca.launch.overview import collect
    from slca.launch.table import Column

    root = Path(args.root)
    views = sorted(collect(None, root), key=lambda v: (v.created, v.run_dir))
    if args.json:
        print(json.dumps([asdict(v) for v in views], indent=1))
        return 0
    if not views:
        print(f"slca runs: no run directories under {root}")
        return 0
    columns = [Column("id", 60, keep_end=True), Column("experiment", 24, drop=2), Column("created", 20), Column("state", 24),
               Column("headline metric", 36, drop=1)]
    rows, base = [], root.resolve()
    for v in views:
        where = Path(v.run_dir).resolve()
        run_id = where.relative_to(base).as_posix() if where.is_relative_to(base) else v.run_dir
        metric = f"{v.metric}={_number(v.value)}" if v.metric else ""
        rows.append([run_id, v.experiment, v.created.replace("+00:00", "Z"), _state(v), metric])
    _print_table(columns, rows)
    return 0


def _cmd_logs(args: argparse.Namespace) -> int:
    from slca.launch.base import SweepError, get_launcher
    from slca.launch.logs import pick, show
    from slca.launch.lookup import resolve
    from slca.launch.overview import targets

    path = resolve(args.run)
    found = targets(path)
    if len(found) != 1:
        raise SweepError(f"{path} is a sweep directory of {len(found)} runs; give one run directory (or a prefix of its id)")
    (target,) = found
    attempt = pick(target, args.attempt)
    launcher = get_launcher(target.launcher)

    def alive() -> bool:
        from slca.launch.job import read_record

        job_id = attempt.job_id or (read_record(target.run_dir) or {}).get("job_id")
        return bool(launcher.live({"run": {"run_dir": str(target.run_dir), "job_id": job_id}}))

    sys.stdout.flush()
    show(attempt, sys.stdout.buffer, follow=args.follow, alive=alive)
    return 0


def _cmd_cancel(args: argparse.Namespace) -> int:
    from slca.launch.cancel import cancel
    from slca.launch.lookup import resolve

    path = resolve(args.target)
    done = cancel(path)
    for c in done:
        print(f"slca cancel: {c.run}: {c.outcome} ({c.how})")
    n = sum(c.outcome == "cancelled" for c in done)
    print(f"slca cancel: {n} of {len(done)} run(s) cancelled; each resumes when its sweep runs again (`slca sweep ... --skip-cancelled` leaves them)")
    return 0


def register(sub: Any) -> None:
    """Add `status`, `logs`, `cancel` and `runs` to the `slca` sub-commands."""
    status = sub.add_parser(
        "status", help="one table of runs: state (pending, running, requeued, finished, failed, cancelled, stale), stage, step, metric, log",
        description="Where each run of a sweep directory, one run directory, or every run under --root stands, read from the run "
        "directories and asked of the scheduler now (SLURM's squeue; the local launcher's run locks). RUN may be a unique prefix of a run's id.")
    status.add_argument("target", nargs="?", metavar="SWEEP_DIR|RUN_DIR", help="default: every run under --root")
    status.add_argument("--all", action="store_true", help="every run under --root")
    status.add_argument("--root", default=str(DEFAULT_ROOT), help="where run directories are looked up (default runs)")
    status.add_argument("--json", action="store_true", help="every field of every run as JSON")
    status.set_defaults(func=_cmd_status)

    logs = sub.add_parser("logs", help="a run's job log (one requeue attempt of it), or follow it while the job runs",
                          description="Print the log of a run's job; RUN_DIR may be a unique prefix of a run's id.")
    logs.add_argument("run", metavar="RUN_DIR")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing what the job appends until it is no longer queued or running")
    logs.add_argument("--attempt", type=int, metavar="N", help="only attempt N (1 = the first start; each requeue or resubmission is one more)")
    logs.set_defaults(func=_cmd_logs)

    cancel = sub.add_parser("cancel", help="cancel a run's or a sweep's jobs through the scheduler; the runs stay resumable",
                            description="Cancel the jobs still queued or running (SLURM: scancel; local: SIGTERM) and record the "
                            "cancellation in each run's job.json. `slca sweep` resubmits cancelled runs unless --skip-cancelled.")
    cancel.add_argument("target", metavar="RUN_DIR|SWEEP_DIR")
    cancel.set_defaults(func=_cmd_cancel)

    runs = sub.add_parser("runs", help="list run directories under a root: id, experiment, date, state, headline metric")
    runs.add_argument("root", nargs="?", default=str(DEFAULT_ROOT), metavar="ROOT", help="default runs")
    runs.add_argument("--json", action="store_true", help="every field of every run as JSON")
    runs.set_defaults(func=_cmd_runs)
