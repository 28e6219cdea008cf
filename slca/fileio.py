"""Atomic file writes: readers see the old file or the complete new one, never a partial write.

Every writer of a published file goes through here: a temp file beside the target (same
filesystem, so `os.replace` is atomic), given the umask-derived mode a plain `open()` would
give (mkstemp makes 0600 files), then renamed over the target.

A temporary is named `.<target name>.<pid>-<host digest>.<random>.tmp` (`.old` for a directory
being swapped out). A writer removes its temporaries when it fails or is interrupted (SIGINT,
SIGTERM); one killed outright (SIGKILL, power loss) cannot, so each writer first removes the
temporaries of its target whose writer is gone (`remove_stale`). Folders created for an output are
listed (`make_parents`) so that a command that then fails removes them again (`remove_made`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import socket
import sys
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


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this host (a zombie counts: it is not yet reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):  # someone else's process, or no pid at all: not ours to judge
        return True
    return True


def _host_digest() -> str:
    return hashlib.sha256(socket.gethostname().encode("utf-8", "surrogateescape")).hexdigest()[:8]


def temp_prefix(final: str | os.PathLike[str]) -> str:
    """The mkstemp/mkdtemp prefix of a temporary beside `final`: its name, this process's pid and host."""
    return f".{Path(final).name}.{os.getpid()}-{_host_digest()}."


def remove_stale(final: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporaries of `final` whose writer is gone; one line on stderr names them.

    Gone means: made on this host (another host's pids mean nothing here) by a pid that no longer
    exists. The pid rather than an age: a live writer of a large file can be older than any
    threshold, and a temporary left a second ago by a killed writer is as dead as an old one. A pid
    reused since by an unrelated process keeps its temporary (the safe mistake); a temporary without
    slca's pattern is never touched. A directory swapped out (`.old`) while `final` is missing is
    the previous output, cut off mid-swap: it is put back instead."""
    final = Path(final)
    pattern = re.compile(rf"\.{re.escape(final.name)}\.(\d+)-{_host_digest()}\.[a-z0-9_]{{8}}\.(tmp|old)")
    try:
        entries = list(os.scandir(final.parent))
    except OSError:  # a folder that is not there yet holds nothing stale
        return []
    removed: list[Path] = []
    pids: set[str] = set()
    mine = f".{final.name}."
    for entry in entries:
        match = pattern.fullmatch(entry.name) if entry.name.startswith(mine) else None
        if match is None or pid_alive(int(match.group(1))):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                if match.group(2) == "old" and not os.path.lexists(final) and any(os.scandir(entry.path)):
                    os.replace(entry.path, final)
                    print(f"slca: put back {final}, moved aside by process {match.group(1)} that was killed mid-swap", file=sys.stderr)
                    continue
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:  # removed by another command meanwhile, or not removable: not this write's problem
            continue
        removed.append(Path(entry.path))
        pids.add(match.group(1))
    if removed:
        names = ", ".join(p.name for p in removed[:3]) + (f" and {len(removed) - 3} more" if len(removed) > 3 else "")
        print(f"slca: removed {names} from {final.parent}: temporar{'y' if len(removed) == 1 else 'ies'} of {final.name} "
              f"left by process {', '.join(sorted(pids, key=int)[:3])}{' and others' if len(pids) > 3 else ''}, no longer running", file=sys.stderr)
    return removed


class AtomicTarget:
    """A temp file beside `path`: fill `tmp`, then `commit()` publishes it or `discard()` drops it.

    For writers that stream into the file across calls (use `atomic_path` for one block).
    fsync=True flushes the data to disk before the rename, so a power loss cannot leave an empty
    file under the final name; caches that can lose entries pass False.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale(self.path)
        fd, name = tempfile.mkstemp(prefix=temp_prefix(self.path), suffix=".tmp", dir=self.path.parent)
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
    final = Path(path)
    if final.exists() and not final.is_dir():
        raise NotADirectoryError(f"{final} exists and is not a directory")
    final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(final)
    tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(final), suffix=".tmp", dir=final.parent))
    try:
        yield tmp
        os.chmod(tmp, _DIR_MODE)  # mkdtemp makes 0700 directories
        old: Path | None = None
        if final.exists():
            old = Path(tempfile.mkdtemp(prefix=temp_prefix(final), suffix=".old", dir=final.parent))
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


def make_parents(path: str | os.PathLike[str]) -> list[Path]:
    """Create the missing folders above `path`; returns those created, innermost first, so a
    command that then fails can remove them again (`remove_made`) and leave no trace."""
    made: list[Path] = []
    parent = Path(path).parent
    while not parent.exists() and parent != parent.parent:
        made.append(parent)
        parent = parent.parent
    for d in reversed(made):
        try:
            d.mkdir()
        except FileExistsError:  # created meanwhile by someone else: not ours to remove
            made.remove(d)
    return made


def remove_made(made: list[Path]) -> None:
    """Remove folders `make_parents` created, innermost first, as long as they are empty."""
    for d in made:
        try:
            d.rmdir()
        except OSError:
            return
