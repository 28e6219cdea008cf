"""Run directories written by hand for the report's fast tests: the files a run holds, with chosen contents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml


def write_run(path: Path, records: list[dict[str, Any]] | None = None, *, spec: dict[str, Any] | None = None,
              evals: dict[str, Any] | None = None) -> Path:
    """`path/spec.yaml`, `path/metrics.jsonl` (one JSON line per record) and any evaluation files."""
    path.mkdir(parents=True, exist_ok=True)
    base = {"experiment": "handmade", "estimator": {"name": "slca_grpo"}, "filter": {"name": "none"},
            "downsample": {"name": "none"}, "backend": {"name": "local"}, "run": {"seed": 0}}
    (path / "spec.yaml").write_text(yaml.safe_dump(spec if spec is not None else base))
    if records is not None:
        (path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    for name, doc in (evals or {}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(json.dumps(doc))
    return path


def rl_line(step: int, epoch: int, outcomes: list[tuple[int, int]], **metrics: float) -> dict[str, Any]:
    """One RL step line: `outcomes` are (prompt id, all correct) pairs drawn in `epoch`."""
    return {"stage": "rl", "step": step, "time": 0.0, "epoch": epoch, "prompts/all_correct": [[epoch, p, ok] for p, ok in outcomes],
            **{k.replace("__", "/"): v for k, v in metrics.items()}}


def stats(mean: float, std: float, n: int) -> dict[str, float]:
    return {"mean": mean, "std": std, "n": n}


def results_v1(label: str, n_seeds: int) -> dict[str, Any]:
    """A results.json of schema 1 (as `slca eval` writes it) with two template levels."""
    cells = [
        {"protocol": {"template": t, "thinking": "keep", "system_prompt": "stronger"}, "seeds": list(range(n_seeds)),
         "metrics": {"success": stats(0.5 + 0.1 * i, 0.05 if n_seeds > 1 else 0.0, n_seeds), "name_f1": stats(0.8, 0.01 if n_seeds > 1 else 0.0, n_seeds)},
         "per_seed": []}
        for i, t in enumerate(("native", "context"))
    ]
    return {"schema_version": 1, "results": [{
        "card": {"eval_name": "protocol_grid", "model": {"label": label, "path": "rl/model", "weights_sha256": "ab" * 32},
                 "decoding": {"temperature": 0.7, "top_p": 1.0}, "software": {"git_commit": "abc123", "packages": {"torch": "2", "numpy": "1"}}},
        "headline": ["success", "name_f1"],
        "cells": cells,
        "sensitivity": {"effects": [{"factor": "template", "level": "context", "reference": "native",
                                     "diffs": {"success": stats(0.1, 0.02, 2 * n_seeds), "name_f1": stats(-0.004, 0.001, 2 * n_seeds)}}],
                        "seed_spread": {"success": stats(0.05, 0.0, 2), "name_f1": stats(0.01, 0.0, 2)} if n_seeds > 1 else None},
    }]}


def html_tables(text: str) -> list[list[list[str]]]:
    """Every <table> of a page as rows of cell texts (header row included), read with the stdlib parser."""
    from html.parser import HTMLParser

    class Reader(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tables: list[list[list[str]]] = []
            self.cell: list[str] | None = None

        def handle_starttag(self, tag: str, attrs: Any) -> None:
            if tag == "table":
                self.tables.append([])
            elif tag == "tr":
                self.tables[-1].append([])
            elif tag in ("td", "th"):
                self.cell = []

        def handle_endtag(self, tag: str) -> None:
            if tag in ("td", "th") and self.cell is not None:
                self.tables[-1][-1].append("".join(self.cell))
                self.cell = None

        def handle_data(self, data: str) -> None:
            if self.cell is not None:
                self.cell.append(data)

    reader = Reader()
    reader.feed(text)
    return reader.tables


def colour_present(png: Path, rgb: tuple[int, int, int]) -> bool:
    """Whether any pixel of the image has exactly this colour (a line or marker of that run)."""
    from PIL import Image

    with Image.open(png) as image:
        return any(pixel[:3] == rgb for pixel in image.convert("RGB").getdata())
