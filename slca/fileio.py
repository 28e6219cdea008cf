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


def _dir_mode() -> int:
    old = os.umask(0)
    os.umask(old)
    return 0o777 & ~old


_DIR_MODE = _dir_mode()


@contextmanager
def atomic_directory(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield an empty temp directory beside `path`; on success it replaces `path` as a whole.

    For commands whose outputs belong together: readers see the old set of files or the new
    one, never a mix. On error the temp directory is removed and `path` is left as it was. The
    old directory is renamed aside, the new one renamed in, then the old one deleted, so `path`
    is briefly absent, never mixed; if the second rename fails the old directory is put back.
    """
    import shutil

    final = Path(path)
    if final.exists() and not final.is_dir():
        raise NotADirectoryError(f"{final} exists and is not a directory")
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    try:
        yield tmp
        os.chmod(tmp, _DIR_MODE)  # mkdtemp makes 0700 directories
        old: Path | None = None
        if final.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".old", dir=final.parent))
            try:
                os.replace(final, old)  # renaming onto the empty placeholder directory is allowed
            except BaseException:
                os.rmdir(old)
                raise
        try:
            os.replace(tmp, final)
        except BaseException:
            if old is not None:
                os.replace(old, final)
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        if old.is_symlink():  # `path` was a link to a directory: the link is replaced, its target kept
            old.unlink()
        else:
            shutil.rmtree(old, ignore_errors=True)
