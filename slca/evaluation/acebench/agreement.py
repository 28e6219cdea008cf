"""slca's ACEBench checker against ACEBench's own evaluation code (docs/eval.md#checking-the-checker-against-acebench).

Every entry's gold answer and its perturbations (slca.evaluation.acebench.gold.perturbations) are
scored by slca.evaluation.acebench.check here and by ACEBench's eval_main.py in ACEBench's own
environment (slca/evaluation/acebench/upstream.py, a subprocess); the verdicts are compared one by one.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from slca.config.benchmarks import ACEBENCH_CATEGORIES
from slca.evaluation.acebench.data import ROOT, Entry, load_category
from slca.evaluation.acebench.gold import perturbations
from slca.evaluation.acebench.score import check

DRIVER = Path(__file__).resolve().parent / "upstream.py"
ENV_PYTHON = ROOT.parents[1] / ".cache" / "acebench-env" / "bin" / "python"


@dataclass(frozen=True)
class Verdict:
    """One output's verdicts: slca's (with its error kind) and ACEBench's (None where ACEBench's code raised)."""

    category: str
    id: str
    kind: str
    slca: bool
    slca_error: str | None
    acebench: bool | None
    raised: str | None = None


@dataclass
class Agreement:
    verdicts: list[Verdict] = field(default_factory=list)

    @property
    def decided(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.acebench is not None]

    @property
    def agreeing(self) -> int:
        return sum(v.slca == v.acebench for v in self.decided)

    @property
    def disagreements(self) -> list[Verdict]:
        return [v for v in self.decided if v.slca != v.acebench]

    @property
    def raised(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.acebench is None]

    def table(self) -> str:
        """Agreeing / decided verdicts and the valid counts of each side, per perturbation kind."""
        lines = [f"{'kind':16s} {'agree':>12s} {'slca valid':>11s} {'ACEBench valid':>15s} {'ACEBench raised':>16s}"]
        kinds = list(dict.fromkeys(v.kind for v in self.verdicts))
        for kind in [*kinds, "all"]:
            vs = [v for v in self.verdicts if kind in ("all", v.kind)]
            decided = [v for v in vs if v.acebench is not None]
            lines.append(f"{kind:16s} {sum(v.slca == v.acebench for v in decided):>5d} / {len(decided):<5d}"
                         f" {sum(v.slca for v in vs):>11d} {sum(bool(v.acebench) for v in vs):>15d} {len(vs) - len(decided):>16d}")
        return "\n".join(lines)


def batches(categories: Sequence[str] = ACEBENCH_CATEGORIES, limit: int | None = None) -> tuple[list[dict], dict[str, list[Entry]]]:
    """ACEBench result batches, one per (category, output kind): every entry of the category gets that
    kind's text, or its gold text where the kind does not apply to it (not compared then)."""
    out, entries = [], {}
    for name in categories:
        entries[name] = load_category(name, limit=limit)
        texts = [perturbations(e) for e in entries[name]]
        for kind in dict.fromkeys(k for t in texts for k in t):
            out.append({"category": name, "model": f"slca_{kind}", "texts": [t.get(kind, t["gold"]) for t in texts],
                        "applies": [kind in t for t in texts]})
    return out, entries


def run_upstream(python: Path, batch_list: list[dict], *, timeout_s: float = 600) -> list[dict]:
    """ACEBench's verdicts on `batch_list`, from its own code run by `python` (ACEBench's environment)."""
    with tempfile.TemporaryDirectory() as tmp:
        cases, out = Path(tmp) / "cases.json", Path(tmp) / "verdicts.json"
        cases.write_text(json.dumps(batch_list), encoding="utf-8")
        proc = subprocess.run([str(python), str(DRIVER), str(ROOT), str(cases), str(out)], capture_output=True, text=True,
                              timeout=timeout_s, cwd=tmp)
        if proc.returncode != 0:
            raise RuntimeError(f"ACEBench's evaluation exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
        return json.loads(out.read_text(encoding="utf-8"))


def compare(python: Path = ENV_PYTHON, categories: Sequence[str] = ACEBENCH_CATEGORIES, limit: int | None = None) -> Agreement:
    """Every applicable (entry, output kind) scored by both checkers."""
    batch_list, entries = batches(categories, limit)
    upstream = {(v["category"], v["model"], v["id"]): v for v in run_upstream(python, batch_list)}
    result = Agreement()
    for batch in batch_list:
        kind = batch["model"].removeprefix("slca_")
        for entry, text, applies in zip(entries[batch["category"]], batch["texts"], batch["applies"]):
            if not applies:
                continue
            ok, err = check(entry, text)
            theirs = upstream[(batch["category"], batch["model"], entry.id)]
            result.verdicts.append(Verdict(entry.category, entry.id, kind, ok, err, theirs["valid"], theirs["raised"]))
    return result


def disagreement_kinds(agreement: Agreement) -> Counter:
    """(category, kind, slca's error kind) of each disagreement, counted."""
    return Counter((v.category, v.kind, v.slca_error) for v in agreement.disagreements)
