"""Built backbones are cached by content key: written into a temporary beside the final directory and
renamed into place, so a reader sees a complete build or none, and an interrupted build leaves nothing
that could be taken for a model."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
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
        with _without_library_bars():
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


@contextlib.contextmanager
def _without_library_bars() -> Iterator[None]:
    """transformers' "Writing model shards" bar off while a build writes (a cache fill is no progress to
    show on a run's terminal); its switch is process-wide, so it is put back as it was."""
    from transformers.utils import logging as hf_logging

    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()
