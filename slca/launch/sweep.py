"""Plan a sweep's runs, submit the ones not finished or going, and keep its manifest (docs/launch.md#sweeps).

Layout of a sweep directory:

    <sweep_dir>/sweep.json        what was asked: name, experiment, overrides, grid, seed keys
    <sweep_dir>/manifest.json     per run: grid values, run dir, job id, array index, log, submissions
    <sweep_dir>/runs/<key>/       each run's directory (spec.yaml, provenance.json, job.json, ...)
    <sweep_dir>/logs/             job logs (submitit's folder on SLURM, one file per run locally)
    <sweep_dir>/code/<digest>/    the code the jobs run, frozen at submission (slca/launch/snapshot.py)

Every run's spec is composed and validated, and what it reads from outside (eval.from_run) checked,
before anything is written or submitted. Running the same sweep again skips finished runs and runs
whose job is still alive, and resubmits the rest; a resubmitted run resumes from its checkpoints. A
run directory whose finished stages came from a different spec is refused, as `slca run` refuses it.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from slca.fileio import atomic_write_json
from slca.launch.base import RunPlan, SweepError, get_launcher
from slca.launch.grid import SweepFile, point_key, point_overrides, points
from slca.launch.snapshot import freeze
from slca.launch.status import CANCELLED, ENDED, FINISHED, RunStatus, run_status

MANIFEST = "manifest.json"
SWEEP = "sweep.json"
SUBMISSION = "submission.json"  # in a run directory submitted on its own (`slca run launcher=slurm`)
DEFAULT_ROOT = Path("runs/sweeps")


def plan_runs(sweep: SweepFile, extra: list[str], sweep_dir: Path) -> list[RunPlan]:
    """Compose and validate every run's spec: a bad grid point is one line naming it."""
    from slca.config.compose import compose_spec
    from slca.config.errors import SpecError
    from slca.launch.lookup import with_from_run_found

    plans = []
    for point in points(sweep.grid):
        key = point_key(point)
        overrides = [f"experiment={sweep.experiment}", *sweep.overrides, *extra, *point_overrides(point)]
        try:
            spec = compose_spec(overrides)
        except SpecError as exc:
            raise SpecError(f"sweep {sweep.name}, run {key}: {exc}") from None
        spec = with_from_run_found(spec)
        run_dir = sweep_dir / "runs" / key
        update: dict[str, Any] = {"run": spec.run.model_copy(update={"dir": str(run_dir), "name": key})}
        if "group" in type(spec.logger).model_fields:  # W&B groups a sweep's runs under its name
            update["logger"] = spec.logger.model_copy(update={"group": sweep.name})
        plans.append(RunPlan(key, point, spec.model_copy(update=update), run_dir))
    keys = [plan.key for plan in plans]
    if len(set(keys)) != len(keys):
        raise SweepError(f"sweep {sweep.name}: two grid points share the run directory name {next(k for k in keys if keys.count(k) > 1)!r}")
    launchers = {plan.spec.launcher.model_dump_json() for plan in plans}
    if len(launchers) > 1:
        raise SweepError(f"sweep {sweep.name}: every run must use the same launcher settings (the grid may not sweep launcher.*)")
    return plans


def read_manifest(sweep_dir: Path) -> dict[str, Any]:
    path = sweep_dir / MANIFEST
    if not path.exists():
        return {"runs": {}}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(manifest.get("runs"), dict):
            raise ValueError("no runs mapping")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError) as exc:
        raise SweepError(f"{path} is unreadable ({type(exc).__name__}: {exc}); move it aside to start the sweep over") from None
    return manifest


def statuses(sweep_dir: Path, manifest: dict[str, Any]) -> dict[str, RunStatus]:
    """run key -> status, asking the sweep's launcher which jobs are alive."""
    runs = manifest["runs"]
    if not runs:
        return {}
    live = get_launcher(manifest.get("launcher", "local")).live(runs)
    return {key: run_status(entry, live[key].state if key in live else None) for key, entry in runs.items()}


def _stamp() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def run_sweep(sweep: SweepFile, extra: list[str], sweep_dir: Path, *, argv: list[str], wait: bool = False,
              echo: Callable[[str], None] = print, poll_s: float = 2.0, skip_cancelled: bool = False) -> int:
    """Submit what is left of the sweep; 0 when nothing is left failing (or, with `wait`, when all finished).
    Cancelled runs are resubmitted like failed ones unless `skip_cancelled`."""
    from slca.pipeline import check_inputs, prepare_run_dir

    sweep_dir = sweep_dir.resolve()
    plans = plan_runs(sweep, extra, sweep_dir)
    cfg = plans[0].spec.launcher
    manifest = read_manifest(sweep_dir)
    if manifest["runs"] and manifest.get("launcher", cfg.name) != cfg.name:
        raise SweepError(f"{sweep_dir} was launched with launcher={manifest['launcher']}; keep it, or use another sweep directory")
    manifest.update({"name": sweep.name, "launcher": cfg.name})
    manifest.setdefault("created", _stamp())
    known = statuses(sweep_dir, manifest)
    todo = []
    for plan in plans:
        status = known.get(plan.key)
        if status is not None and status.state == FINISHED:
            echo(f"[{sweep.name}] {plan.key}: finished, skipped")
        elif status is not None and status.state == CANCELLED and skip_cancelled:
            echo(f"[{sweep.name}] {plan.key}: {status.error}, skipped (--skip-cancelled)")
        elif status is not None and status.state not in ENDED:
            echo(f"[{sweep.name}] {plan.key}: {status.state} (job {manifest['runs'][plan.key].get('job_id')}), skipped")
        else:
            if status is not None:
                echo(f"[{sweep.name}] {plan.key}: {status.state} ({status.error}); resubmitting")
            todo.append(plan)
    for plan in todo:  # what the runs read from outside, checked before anything is written
        check_inputs(plan.spec)
    atomic_write_json(sweep_dir / SWEEP, {**sweep.model_dump(mode="json"), "extra_overrides": extra})
    for plan in todo:  # every run directory is checked and recorded before the first job starts
        prepare_run_dir(plan.spec, argv=argv)
        entry = manifest["runs"].setdefault(plan.key, {"submissions": []})
        entry.update({"point": plan.point, "run_dir": str(plan.run_dir), "job_id": None, "array_index": None, "log": None})
    atomic_write_json(sweep_dir / MANIFEST, manifest)
    if todo:
        launcher = get_launcher(cfg.name)
        code = freeze(sweep_dir)
        for sub in launcher.submit(todo, cfg, name=sweep.name, log_dir=sweep_dir / "logs", code=code):
            entry = manifest["runs"][sub.key]
            entry.update({"job_id": sub.job_id, "array_index": sub.array_index, "log": sub.log})
            entry["submissions"].append({"job_id": sub.job_id, "array_index": sub.array_index, "time": _stamp(), "code": code.digest})
        atomic_write_json(sweep_dir / MANIFEST, manifest)
        jobs = sorted({str(manifest["runs"][p.key]["job_id"]).split("_")[0] for p in todo})
        echo(f"[{sweep.name}] submitted {len(todo)} run(s) with launcher={cfg.name} (jobs {', '.join(jobs)}); manifest {sweep_dir / MANIFEST}")
    else:
        echo(f"[{sweep.name}] nothing to submit")
    if wait:
        final = wait_for(sweep_dir, poll_s=poll_s)
        return 0 if all(s.state == FINISHED for s in final.values()) else 1
    return 0


def wait_for(sweep_dir: Path, *, poll_s: float = 2.0, timeout_s: float | None = None) -> dict[str, RunStatus]:
    """Poll the sweep until no run is queued or running; its final statuses."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        current = statuses(sweep_dir, read_manifest(sweep_dir))
        if all(s.state in ENDED for s in current.values()):
            return current
        if deadline is not None and time.monotonic() > deadline:
            raise SweepError(f"{sweep_dir}: runs still going after {timeout_s:.0f}s")
        time.sleep(poll_s)


def submit_one(spec: Any, *, argv: list[str], echo: Callable[[str], None] = print) -> int:
    """`slca run launcher=slurm ...` without -m: one job for one run directory (logs under it)."""
    from slca.pipeline import check_inputs, prepare_run_dir

    check_inputs(spec)
    spec, run_dir = prepare_run_dir(spec, argv=argv)
    plan = RunPlan(run_dir.name, {}, spec, run_dir)
    (sub,) = get_launcher(spec.launcher.name).submit([plan], spec.launcher, name=spec.experiment, log_dir=run_dir / "logs" / "launch",
                                                     code=freeze(run_dir))
    # What a sweep's manifest holds for each run, for `slca status`, `logs` and `cancel` on this run directory.
    atomic_write_json(run_dir / SUBMISSION, {"launcher": spec.launcher.name, "job_id": sub.job_id, "array_index": sub.array_index,
                                             "log": sub.log, "time": _stamp()})
    echo(f"slca: submitted {run_dir} as job {sub.job_id} (launcher={spec.launcher.name}); log {sub.log}")
    return 0


def multirun_sweep(overrides: list[str]) -> tuple[SweepFile, list[str], Path]:
    """`slca run -m` overrides → (an ad-hoc sweep, no extra overrides, its directory).

    `run.dir=DIR` names the sweep directory; otherwise it is runs/sweeps/<experiment>-multirun-<hash
    of the overrides>, so running the same command again continues the same sweep."""
    import hashlib

    from slca.config.compose import compose_spec
    from slca.launch.grid import split_multirun

    fixed, grid = split_multirun(overrides)
    if not grid:
        raise SweepError("multirun (-m): no override sweeps anything; give one as key=a,b")
    sweep_dir = None
    for override in list(fixed):
        if override.startswith("run.dir="):
            sweep_dir = Path(override.split("=", 1)[1])
            fixed.remove(override)
    experiment = compose_spec(fixed).experiment
    digest = hashlib.sha256("\n".join(sorted(overrides)).encode()).hexdigest()[:8]
    name = f"{experiment}-multirun-{digest}"
    sweep = SweepFile(name=name, experiment=experiment, overrides=fixed, grid=grid, seed_keys=[k for k in grid if k == "run.seed"])
    return sweep, [], sweep_dir or DEFAULT_ROOT / name
