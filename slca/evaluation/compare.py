"""`slca eval --compare BASE RL`: two evaluated models side by side, the efficiency paper's Table 5 layout.

BASE and RL each name an evaluation's results.json, or a run directory holding eval/results.json,
optionally suffixed `@LABEL` to pick one of its models (default: the only one, else the last: rl
after sft). The table has one row per headline metric of the first protocol cell: base, after RL,
the difference, each value with the standard error its benchmark reported beside it (lm_eval's
`<metric>_stderr`, the harness's own), and notes when the two were not computed on the same data.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from slca.runcontext import RunError

STDERR_SUFFIX = "_stderr"


class CompareError(RunError):
    """The two evaluations cannot be compared; str() is the one-line message for the user."""


@dataclass(frozen=True)
class Picked:
    """One model's result out of a results.json: where it came from and its record."""

    source: str
    label: str
    record: dict[str, Any]

    def value(self, metric: str) -> float | None:
        stats = ((self.record.get("cells") or [{}])[0].get("metrics") or {}).get(metric)
        mean = stats.get("mean") if isinstance(stats, dict) else None
        return float(mean) if isinstance(mean, (int, float)) and math.isfinite(mean) else None


def results_file(path: Path) -> Path:
    for candidate in (path, path / "eval" / "results.json", path / "results.json"):
        if candidate.is_file():
            return candidate
    raise CompareError(f"slca eval --compare: {path}: no results.json there (give an evaluation's results.json or its run directory)")


def pick(arg: str, find: Callable[[str], Path] = Path) -> Picked:
    """The result `arg` names (PATH or PATH@LABEL); `find` turns PATH into a path (the command line's
    also takes a unique prefix of a run's id)."""
    path, at, label = arg.rpartition("@") if "@" in arg and not Path(arg).exists() else (arg, "", "")
    file = results_file(find(path))
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        results = data["results"]
        labels = [r["card"]["model"]["label"] for r in results]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CompareError(f"slca eval --compare: {file}: not an evaluation record ({type(exc).__name__})") from None
    if not results:
        raise CompareError(f"slca eval --compare: {file}: holds no evaluated model")
    if at:
        if label not in labels:
            raise CompareError(f"slca eval --compare: {file}: no model labelled {label!r}; it holds {', '.join(labels)}")
        return Picked(str(file), label, results[labels.index(label)])
    return Picked(str(file), labels[-1], results[-1])


def _fmt(value: float | None, stderr: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.4f}" if stderr is None else f"{value:.4f} ± {stderr:.4f}"


def data_notes(base: Picked, rl: Picked) -> list[str]:
    """Why the two numbers may not be comparable: a different benchmark, data, task versions or document count."""
    a, b = base.record["card"], rl.record["card"]
    notes = []
    if a["scoring"]["benchmark"] != b["scoring"]["benchmark"]:
        raise CompareError(f"slca eval --compare: {base.source} is {a['scoring']['benchmark']}, {rl.source} is {b['scoring']['benchmark']}")
    if a["data"].get("versions") != b["data"].get("versions"):
        notes.append(f"task versions differ: base {a['data'].get('versions')}, RL {b['data'].get('versions')}")
    elif a["data"]["sha256"] != b["data"]["sha256"]:
        notes.append(f"data differ: sha256 {a['data']['sha256'][:12]} (base) vs {b['data']['sha256'][:12]} (RL)")
    if a["data"]["rows_evaluated"] != b["data"]["rows_evaluated"]:
        notes.append(f"documents evaluated differ: {a['data']['rows_evaluated']} (base) vs {b['data']['rows_evaluated']} (RL)")
    return notes


def compare_table(base: Picked, rl: Picked) -> str:
    """The Table 5 layout for two picked results (markdown)."""
    notes = data_notes(base, rl)
    metrics = [m for m in base.record.get("headline", []) if not m.endswith(STDERR_SUFFIX) and m in rl.record.get("headline", [])]
    if not metrics:
        raise CompareError(f"slca eval --compare: {base.source} and {rl.source} share no headline metric")
    card = base.record["card"]
    lines = [f"# {card['scoring']['benchmark']}: base vs after RL", "",
             f"- base: {base.label} = {card['model']['path']} ({base.source})",
             f"- RL: {rl.label} = {rl.record['card']['model']['path']} ({rl.source})",
             f"- scoring: {card['scoring']['reward']}"]
    if card["data"].get("versions"):
        lines.append("- task versions: " + ", ".join(f"{k} {v}" for k, v in sorted(card["data"]["versions"].items())))
    lines += [f"- note: {n}" for n in notes]
    lines += ["", "Values ± the benchmark's own standard error where it reports one.", "",
              "| metric | base | after RL | Δ (RL − base) |", "|---|---|---|---|"]
    for m in metrics:
        b, r = base.value(m), rl.value(m)
        diff = "n/a" if b is None or r is None else f"{r - b:+.4f}"
        lines.append(f"| {m} | {_fmt(b, base.value(m + STDERR_SUFFIX))} | {_fmt(r, rl.value(m + STDERR_SUFFIX))} | {diff} |")
    return "\n".join(lines) + "\n"


def compare(base_arg: str, rl_arg: str, find: Callable[[str], Path] = Path) -> str:
    return compare_table(pick(base_arg, find), pick(rl_arg, find))
