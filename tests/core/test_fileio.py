"""Atomic writes: complete files or nothing, umask permissions, no temp files left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from slca.fileio import AtomicTarget, atomic_directory, atomic_path, atomic_write_json, atomic_write_text


def _leftovers(d):
    return sorted(p.name for p in d.iterdir() if p.name.endswith(".tmp"))


def test_write_text_and_json_replace_and_follow_umask(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    atomic_write_text(target, "old")
    atomic_write_text(target, "new ü")
    assert target.read_text(encoding="utf-8") == "new ü"
    (tmp_path / "sub" / "ref").write_text("x")  # a plain open() shows the mode umask gives
    assert target.stat().st_mode & 0o777 == (tmp_path / "sub" / "ref").stat().st_mode & 0o777
    atomic_write_json(tmp_path / "a.json", {"b": 1, "a": [2]})
    assert json.loads((tmp_path / "a.json").read_text()) == {"a": [2], "b": 1}
    atomic_write_text(tmp_path / "c.txt", "cache", fsync=False)
    assert (tmp_path / "c.txt").read_text() == "cache"
    assert _leftovers(tmp_path) == _leftovers(tmp_path / "sub") == []


def test_error_inside_block_keeps_old_file_and_removes_temp(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("partial")
            assert tmp.parent == tmp_path and tmp.name.startswith(".out.txt.")
            raise RuntimeError("boom")
    assert target.read_text() == "old" and _leftovers(tmp_path) == []


def test_streaming_target_commit_and_discard(tmp_path):
    t = AtomicTarget(tmp_path / "s.jsonl", fsync=False)
    with open(t.tmp, "w") as fh:
        fh.write("1\n")
    assert not (tmp_path / "s.jsonl").exists()
    assert t.commit() == tmp_path / "s.jsonl" and (tmp_path / "s.jsonl").read_text() == "1\n"
    d = AtomicTarget(tmp_path / "gone.jsonl")
    d.discard()
    d.discard()  # idempotent
    assert not (tmp_path / "gone.jsonl").exists() and _leftovers(tmp_path) == []


def test_failed_commit_removes_temp(tmp_path):
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "f").write_text("x")
    t = AtomicTarget(tmp_path / "dir")  # replacing a non-empty directory with a file fails
    with pytest.raises(OSError):
        t.commit()
    assert _leftovers(tmp_path) == [] and os.path.isdir(tmp_path / "dir")


def _dir_state(d):
    return {str(p.relative_to(d)): p.read_text() for p in sorted(d.rglob("*")) if p.is_file()}


def test_atomic_directory_replaces_the_whole_directory_or_nothing(tmp_path):
    target = tmp_path / "out"
    with atomic_directory(target) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".out.") and not target.exists()
        (tmp / "a.txt").write_text("1")
        (tmp / "sub").mkdir()
        (tmp / "sub" / "b.txt").write_text("2")
    assert _dir_state(target) == {"a.txt": "1", "sub/b.txt": "2"}
    (tmp_path / "ref").mkdir()  # a plain mkdir shows the mode umask gives
    assert target.stat().st_mode & 0o777 == (tmp_path / "ref").stat().st_mode & 0o777
    with pytest.raises(RuntimeError):
        with atomic_directory(target) as tmp:
            (tmp / "a.txt").write_text("new")
            raise RuntimeError("half-way")
    assert _dir_state(target) == {"a.txt": "1", "sub/b.txt": "2"}  # untouched
    with atomic_directory(target) as tmp:
        (tmp / "c.txt").write_text("3")
    assert _dir_state(target) == {"c.txt": "3"}  # nothing of the old set survives
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "ref"]  # no temp or old dirs left


def test_atomic_directory_refuses_a_file_in_the_way(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotADirectoryError):
        with atomic_directory(tmp_path / "f"):
            raise AssertionError("never entered")
    assert (tmp_path / "f").read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def _killed_writer(script: str, directory) -> int:
    """Run `script` (with `d`, the directory) in a child that exits without any cleanup, as under
    SIGKILL; returns the child's pid, which no process holds any more."""
    prologue = "import os, sys, tempfile\nfrom pathlib import Path\nfrom slca.fileio import *\nd = Path(sys.argv[1])\n"
    proc = subprocess.run([sys.executable, "-c", prologue + script + "\nos._exit(0)\n", str(directory)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout)


def test_temporaries_of_a_killed_writer_are_removed_by_the_next_write_of_the_same_target(tmp_path, capsys):
    pid = _killed_writer("AtomicTarget(d / 'out.txt')\n"
                         "writing = atomic_directory(d / 'set')\ntmp = writing.__enter__()\n(tmp / 'a.txt').write_text('half')\n"
                         "print(os.getpid())", tmp_path)
    left = _leftovers(tmp_path)
    assert len(left) == 2 and all(f".{pid}-" in name for name in left)

    atomic_write_text(tmp_path / "out.txt", "new")
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("slca: removed .out.txt.") and f"process {pid}" in line
    assert _leftovers(tmp_path) == [name for name in left if name.startswith(".set.")], "another target's temporary is its writer's business"
    with atomic_directory(tmp_path / "set") as tmp:
        (tmp / "b.txt").write_text("whole")
    assert _dir_state(tmp_path / "set") == {"b.txt": "whole"} and _leftovers(tmp_path) == []
    assert "slca: removed .set." in capsys.readouterr().err


def test_temporaries_of_live_writers_other_hosts_and_other_patterns_are_left_alone(tmp_path, capsys):
    live = AtomicTarget(tmp_path / "out.txt")  # this process: alive
    pid = _killed_writer("print(os.getpid())", tmp_path)
    # A dead pid on another host (its pids mean nothing here), an older slca's name, names slca never makes.
    for name in (f".out.txt.{pid}-ffffffff.abcdefgh.tmp", ".out.txt.abcdefgh.tmp", "out.txt.tmp", f".out.txt.{pid}.abcdefgh.tmp"):
        (tmp_path / name).write_text("not this host's slca's")
    before = _leftovers(tmp_path)
    assert len(before) == 5

    atomic_write_text(tmp_path / "out.txt", "new")
    assert _leftovers(tmp_path) == before and capsys.readouterr().err == ""
    live.discard()


def test_a_directory_moved_aside_by_a_writer_killed_mid_swap_is_put_back(tmp_path, capsys):
    final = tmp_path / "set"
    with atomic_directory(final) as tmp:
        (tmp / "a.txt").write_text("previous")
    # Killed between moving the old set aside and renaming the new one in: `set` is missing.
    _killed_writer("old = tempfile.mkdtemp(prefix=temp_prefix(d / 'set'), suffix='.old', dir=d)\n"
                   "os.replace(d / 'set', old)\nprint(os.getpid())", tmp_path)
    assert not final.exists()

    with pytest.raises(RuntimeError):
        with atomic_directory(final):
            raise RuntimeError("this write fails too")
    assert _dir_state(final) == {"a.txt": "previous"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set"]
    assert "slca: put back" in capsys.readouterr().err
