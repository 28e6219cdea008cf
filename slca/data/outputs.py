"""Checks on where a data command will write, run before it reads or writes anything.

Refused up front (one line, nothing written): an output that is the input (also through a
symlink or hard link), an output named like the LLaMA-Factory registry, two outputs on one
path, an output whose folder cannot be created or written, and an output directory holding
files the command did not write (it is replaced as a whole, so they would be lost).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from slca.data.errors import DataInputError
from slca.data.io import check_readable, file_format

REGISTRY_NAME = "dataset_info.json"


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:  # one of them does not exist yet: only the path comparison applies
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _check_writable_parent(path: Path, label: str) -> None:
    """The nearest existing ancestor of `path` must be a directory we can write into."""
    parent = path.parent
    while not parent.exists():
        if parent == parent.parent:
            break
        parent = parent.parent
    if not parent.is_dir():
        raise DataInputError(f"{path}: cannot create the {label} there: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise DataInputError(f"{path}: cannot write the {label}: directory {parent} is not writable")


def check_inputs(inputs: Iterable[str | os.PathLike[str]]) -> None:
    """Each input exists, is a file and has a known suffix."""
    for src in inputs:
        check_readable(src)


def check_paths(inputs: Iterable[str | os.PathLike[str]],
                outputs: Mapping[str, str | os.PathLike[str] | None]) -> None:
    """Refuse file outputs (label → path; None = not written) that would overwrite an input, the
    registry or each other, or that cannot be written; inputs must be readable."""
    inputs = [Path(p) for p in inputs]
    check_inputs(inputs)
    seen: dict[Path, str] = {}
    for label, raw in outputs.items():
        if raw is None:
            continue
        out = Path(raw)
        if out.name == REGISTRY_NAME:
            raise DataInputError(f"{out}: the {label} may not be named {REGISTRY_NAME} (that file is the dataset registry)")
        for src in inputs:
            if _same_file(out, src):
                raise DataInputError(f"{out}: the {label} is the input file {src}; write it elsewhere")
        if out.is_dir():
            raise DataInputError(f"{out}: the {label} is an existing directory")
        key = out.resolve()
        if key in seen:
            raise DataInputError(f"{out}: the {label} and the {seen[key]} are the same file")
        seen[key] = label
        file_format(out)
        _check_writable_parent(out, label)


def check_out_dir(out_dir: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]],
                  owned: Iterable[str]) -> None:
    """An output directory that will be replaced as a whole: absent, or holding only `owned`
    names (what this command writes), not containing an input, and creatable."""
    d = Path(out_dir)
    inputs = [Path(p) for p in inputs]
    check_inputs(inputs)
    if d.exists() and not d.is_dir():
        raise DataInputError(f"{d}: --out exists and is not a directory")
    for src in inputs:
        if d.resolve() in src.resolve().parents or _same_file(d, src):
            raise DataInputError(f"{d}: --out contains the input {src}, and the directory is replaced as a whole")
    if d.is_dir():
        foreign = sorted(p.name for p in d.iterdir() if p.name not in set(owned))
        if foreign:
            shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
            raise DataInputError(f"{d}: --out holds files this command does not write ({shown}); "
                                 "it is replaced as a whole, so choose a new or empty directory")
    _check_writable_parent(d, "output directory")


def check_work_dir(directory: str | os.PathLike[str], option: str) -> None:
    """A directory an option names for the command to keep files in (created when missing, kept
    across runs, such as a cache): not a file, and writable or creatable."""
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise DataInputError(f"{option} {d}: exists and is not a directory")
    if d.is_dir() and not os.access(d, os.W_OK | os.X_OK):
        raise DataInputError(f"{option} {d}: directory is not writable")
    _check_writable_parent(d, f"{option} directory")
