"""Where each run of a sweep stands, read from its directory, its job record and its launcher.

`finished`: every stage of its spec has a result. `running` / `pending` (or another live SLURM
state): its job is still queued or running. `failed`: it ended without finishing, with the error
line slca printed and the log's path. `cancelled`: `slca cancel` stopped its current job. `stale`:
the launcher no longer knows its job and the job wrote no outcome (killed outright, or gone before
it started the run), with the log's last line. `missing`: nothing was ever prepared for it.
A sweep resubmits failed, stale, missing and (unless told not to) cancelled runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from slca.launch.job import read_record
from slca.safe_yaml import load_yaml

FINISHED, FAILED, MISSING, CANCELLED, STALE = "finished", "failed", "missing", "cancelled", "stale"
ENDED = (FINISHED, FAILED, MISSING, CANCELLED, STALE)  # no job of the run is queued or running


@dataclass(frozen=True)
class RunStatus:
    state: str
    error: str = ""
    log: str = ""


def stages_done(run_dir: Path) -> bool:
    """Every stage the run's spec.yaml lists has its result.json."""
    try:
        spec = load_yaml((run_dir / "spec.yaml").read_text(encoding="utf-8"))
        stages = spec["run"]["stages"]
    except (OSError, UnicodeDecodeError, yaml.YAMLError, TypeError, KeyError):
        return False
    return bool(stages) and all((run_dir / str(stage) / "result.json").is_file() for stage in stages)


def last_line(path: str) -> str:
    """The last non-empty line of a log (its tail only: logs can be large); "" when unreadable."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - 8192))
            lines = [ln.strip() for ln in handle.read().decode("utf-8", "replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def run_status(entry: dict[str, Any], live_state: str | None) -> RunStatus:
    """The status of one manifest entry; `live_state` is what its launcher says of its job (None: not alive)."""
    run_dir = Path(entry["run_dir"])
    record = read_record(run_dir) or {}
    log = str(record.get("log") or entry.get("log") or "")
    if stages_done(run_dir):
        return RunStatus(FINISHED, log=log)
    if live_state:
        return RunStatus(live_state, log=log)
    if not (run_dir / "spec.yaml").is_file():
        return RunStatus(MISSING, "never prepared (no spec.yaml)", log)
    state, job_id = record.get("state"), entry.get("job_id")
    if state == "cancelled" and (not job_id or record.get("cancelled_job") in (job_id, None)):
        return RunStatus(CANCELLED, f"cancelled at {record.get('cancelled')}", log)
    if state == "failed":
        return RunStatus(FAILED, str(record.get("error") or f"exit code {record.get('rc')}"), log)
    if state == "running":
        tail = last_line(log)
        return RunStatus(STALE, f"the job ended without a record of how (killed?); log ends: {tail}" if tail else "the job ended without a record of how (killed?)", log)
    if state == "done":
        return RunStatus(FAILED, "the run exited cleanly but some stages have no result (a stage unavailable?)", log)
    if job_id:
        tail = last_line(log)
        return RunStatus(STALE, f"the job never started the run; log ends: {tail}" if tail else "the job never started the run (no log)", log)
    return RunStatus(MISSING, "never submitted", log)
