"""Validate one split file end to end: the function `slca data validate` runs, and the one the
pipeline's data stage calls to honour `data.on_error` on Toucan input (docs/method.md#data)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slca.data.schemas import DataValidationError, RowError, ValidationReport, Validator


def default_rejects_path(path: str | os.PathLike[str], rejects_dir: str | os.PathLike[str] | None,
                         out: str | os.PathLike[str] | None) -> Path:
    """`<rejects_dir>/<stem>.rejects.jsonl`, else beside `out`, else `<input>.rejects.jsonl`."""
    from slca.data.convert import rejects_path

    if rejects_dir is not None:
        return Path(rejects_dir) / f"{Path(path).name.split('.')[0]}.rejects.jsonl"
    if out is not None:
        return rejects_path(out)
    return Path(f"{path}.rejects.jsonl")


def validate_split_file(path: str | os.PathLike[str], split: str, on_error: str = "fail",
                        rejects_dir: str | os.PathLike[str] | None = None, *,
                        out: str | os.PathLike[str] | None = None,
                        on_row_error: Callable[[RowError], None] | None = None) -> ValidationReport:
    """Check every row of `path` against the `split` schema (sft | rl | eval); returns the counts.

    on_error="fail": the whole file is scanned (so every bad row reaches `on_row_error`), nothing
    is written, and DataValidationError is raised when any row is bad, naming the file, the count
    and the first bad row's index, field and reason.
    on_error="skip": bad rows go to a rejects file (in `rejects_dir` when given, see
    `default_rejects_path`) and, with `out`, the valid rows are written there; counts reconcile
    (rows_in = rows_out + rows_rejected).
    A file that cannot be read, holds no rows, or an output that cannot be written raises
    DataInputError and nothing is written.
    """
    from slca.data.convert import RejectsWriter
    from slca.data.io import RowWriter, read_rows
    from slca.data.outputs import check_paths

    if on_error not in ("fail", "skip"):
        raise ValueError(f"on_error must be 'fail' or 'skip', got {on_error!r}")
    rej_path = default_rejects_path(path, rejects_dir, out) if on_error == "skip" else None
    check_paths([path], {"output": out, "rejects file": rej_path})
    rejects = RejectsWriter(rej_path) if rej_path is not None else None
    first_bad: list[RowError] = []

    def on_reject(idx: int, errs: list[RowError], row: Any) -> None:
        if not first_bad:
            first_bad.extend(errs)
        if on_row_error is not None:
            for e in errs:
                on_row_error(e)
        if rejects is not None:
            rejects(idx, errs, row)

    # fail mode still scans the whole file so every bad row is listed; it just writes nothing
    v = Validator(split, "skip", on_reject=on_reject)
    writer = RowWriter(out) if out is not None else None
    try:
        for row in v(read_rows(path, allow_empty=False)):
            if writer is not None:
                writer.write(row)
        if writer is not None:
            if on_error == "fail" and first_bad:
                writer.abort()
            else:
                writer.close()
    except BaseException:
        if writer is not None:
            writer.abort()
        if rejects is not None:
            rejects.close(keep=False)
        raise
    if rejects is not None:
        rejects.close(keep=True)
    rep = v.report
    rep.path = str(path)
    rep.rejects_path = str(rej_path) if rej_path is not None else None
    if on_error == "fail" and first_bad:
        raise DataValidationError(first_bad, context=f"{path}: {rep.n_rejected:,} of {rep.n_in:,} rows invalid; first")
    return rep
