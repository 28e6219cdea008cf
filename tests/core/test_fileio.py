"""Atomic writes: complete files or nothing, umask permissions, no temp files left behind."""

from __future__ import annotations

import json
import os

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
