"""Built backbones are cached by content key: written into a temporary beside the final directory and
renamed into place, so a reader sees a complete build or none, and an interrupted build leaves nothing
that could be taken for a model."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from slca.fileio import remove_stale, temp_prefix


def cached_build(final: Path, write: Callable[[Path], None]) -> Path:
    """`final` when a build is already there (its config.json), else `write(tmp)` then the rename."""
    if (final / "config.json").is_file():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(final)
    tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(final), suffix=".tmp", dir=final.parent))
    try:
        write(tmp)
        try:
            os.rename(tmp, final)
        except OSError:
            # Another process finished the same build first; theirs is identical.
            if not (final / "config.json").is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final
