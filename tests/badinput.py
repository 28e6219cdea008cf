"""The contract every CLI entry point keeps on bad input, as one reusable check.

A refused command exits non-zero, prints exactly one line on stderr that names the offending
file / row / field / config path, prints no traceback, and leaves every watched file as it was
(no output changed, none half-written, no stray temporaries). Tests call `main` in-process so a
table of hundreds of cases stays fast; an exception escaping `main` fails the test by itself.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pytest


@dataclass(frozen=True)
class CliResult:
    code: int
    out: str
    err: str


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> CliResult:
    """Run `slca <argv>` in-process; SystemExit (argparse) is turned into its exit code."""
    from slca.cli import main

    capsys.readouterr()
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return CliResult(int(code or 0), captured.out, captured.err)


def snapshot(paths: Iterable[Path]) -> dict[str, str | None]:
    """sha256 of every file under `paths` (directories walked, dotfiles included); None = absent."""
    state: dict[str, str | None] = {}
    for root in paths:
        root = Path(root)
        if root.is_dir():
            state[str(root)] = "<dir>"
            for p in sorted(root.rglob("*")):
                if p.is_file():
                    state[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
        elif root.is_file():
            state[str(root)] = hashlib.sha256(root.read_bytes()).hexdigest()
        else:
            state[str(root)] = None
    return state


def assert_refused(result: CliResult, *mentions: str) -> None:
    """Non-zero exit, one stderr line naming every `mentions` item (case-insensitive), no traceback."""
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert result.code != 0, f"exit 0 on bad input; stderr={result.err!r}"
    assert "Traceback" not in result.err, result.err
    assert len(lines) == 1, f"expected one stderr line, got {len(lines)}:\n{result.err}"
    for needle in mentions:
        assert needle.lower() in lines[0].lower(), f"{needle!r} not named in: {lines[0]}"
