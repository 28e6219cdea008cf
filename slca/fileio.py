"""Atomic file writes: readers see the old file or the complete new one, never a partial write.

Every writer of a published file goes through here: a temp file beside the target (same
filesystem, so `os.replace` is atomic), given the umask-derived mode a plain `open()` would
give (mkstemp makes 0600 files), then renamed over the target.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


def _file_mode() -> int:
    # Read once at import: os.umask can only be read by setting it, which is not thread-safe later.
    old = os.umask(0)
    os.umask(old)
    return 0o666 & ~old


_FILE_MODE = _file_mode()


class AtomicTarget:
    """A temp file beside `path`: fill `tmp`, then `commit()` publishes it or `discard()` drops it.

    For writers that stream into the file across calls (use `atomic_path` for one block).
    fsync=True flushes the data to disk before the rename, so a power loss cannot leave an empty
    file under the final name; caches that can lose entries pass False.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        os.close(fd)
        self.tmp = Path(name)
        self._fsync = fsync

    def commit(self) -> Path:
        """Publish the temp file under the final name (the temp file is removed if this fails)."""
        try:
            if self._fsync:
                with open(self.tmp, "rb") as handle:
                    os.fsync(handle.fileno())
            os.chmod(self.tmp, _FILE_MODE)
            os.replace(self.tmp, self.path)
        except BaseException:
            self.discard()
            raise
        return self.path

    def discard(self) -> None:
        """Remove the temp file; the final path is left untouched."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.tmp)


@contextmanager
def atomic_path(path: str | os.PathLike[str], *, fsync: bool = True) -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success it replaces `path`, on error it is removed."""
    target = AtomicTarget(path, fsync=fsync)
    try:
        yield target.tmp
    except BaseException:
        target.discard()
        raise
    target.commit()


def atomic_write_text(path: str | os.PathLike[str], text: str, *, fsync: bool = True) -> Path:
    """Write `text` (UTF-8) to `path` atomically."""
    with atomic_path(path, fsync=fsync) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    """Write `obj` as indented JSON to `path` atomically."""
    return atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
