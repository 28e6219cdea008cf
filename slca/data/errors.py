"""File-level problems of the data commands (unreadable input, unusable output path, bad option).

Row-level problems are RowErrors (slca.data.schemas); this is for everything that stops a whole
command before it writes anything. The message is one line that names the file or option.
"""

from __future__ import annotations

import os


class DataInputError(ValueError):
    """A data command cannot run on this input or output; str(exc) is the one line to show."""


def one_line(text: str, limit: int = 300) -> str:
    """`text` on one line (library messages can span several), cut at `limit` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def os_error(exc: OSError, path: str | os.PathLike[str] | None = None) -> DataInputError:
    """An OSError as one line naming the file it concerns (`path`: the file the command was
    working on, when the error names another, such as a folder it tried to create)."""
    reason = exc.strerror or type(exc).__name__
    if path is None:
        return DataInputError(one_line(f"{exc.filename}: {reason}" if exc.filename is not None else reason))
    detail = f" ({exc.filename})" if exc.filename is not None and str(exc.filename) != str(path) else ""
    return DataInputError(one_line(f"{path}: cannot write: {reason}{detail}"))
