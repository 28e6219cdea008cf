"""Streaming I/O: round trips, batch-bounded reads, atomic writes."""

from __future__ import annotations

import os

import pytest

from slca.data.io import RowWriter, count_rows, iter_batches, read_rows, write_rows
from slca.data.schemas import arrow_schema


def _rows(n):
    return [{"id": i, "text": f"row {i} ✓", "tags": [f"t{i % 3}"], "meta": {"k": i * 0.5}} for i in range(n)]


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl", ".json"])
def test_round_trip(tmp_path, suffix):
    rows = _rows(1000)
    p = tmp_path / f"x{suffix}"
    assert write_rows(p, iter(rows), batch_size=128) == 1000
    assert list(read_rows(p, batch_size=100)) == rows
    assert count_rows(p) == 1000


def test_parquet_reads_in_bounded_batches(tmp_path):
    p = tmp_path / "x.parquet"
    write_rows(p, iter(_rows(1000)), batch_size=256)
    sizes = [len(b) for b in iter_batches(p, batch_size=64)]
    assert max(sizes) <= 64 and sum(sizes) == 1000
    assert next(read_rows(p, columns=["id"])) == {"id": 0}


def test_failed_write_leaves_nothing(tmp_path):
    p = tmp_path / "out.parquet"
    write_rows(p, iter(_rows(5)))
    before = p.read_bytes()

    def boom():
        yield from _rows(300)
        raise RuntimeError("crash mid-stream")

    with pytest.raises(RuntimeError):
        write_rows(p, boom(), batch_size=100)
    assert p.read_bytes() == before  # the old file is intact
    assert sorted(os.listdir(tmp_path)) == ["out.parquet"]  # no temp files left


def test_empty_with_schema_and_fanout(tmp_path):
    assert write_rows(tmp_path / "e.parquet", iter([]), schema=arrow_schema("rl")) == 0
    assert count_rows(tmp_path / "e.parquet") == 0
    with pytest.raises(ValueError):
        write_rows(tmp_path / "f.parquet", iter([]))
    a, b = RowWriter(tmp_path / "a.jsonl"), RowWriter(tmp_path / "b.parquet", batch_size=3)
    for r in _rows(10):
        (a if r["id"] % 2 else b).write(r)
    assert (a.close(), b.close()) == (5, 5)
    assert [r["id"] for r in read_rows(tmp_path / "b.parquet")] == [0, 2, 4, 6, 8]


def test_bad_jsonl_line_is_a_row_not_a_crash(tmp_path):
    from slca.data.schemas import Validator

    p = tmp_path / "x.jsonl"
    p.write_text('{"a": 1}\n{broken\n\n{"a": 2}\n', encoding="utf-8")
    rows = list(read_rows(p))
    assert len(rows) == 3 and rows[0] == {"a": 1} and isinstance(rows[1], str)
    v = Validator("rl", "skip")
    list(v(rows))
    assert v.report.n_in == 3 and v.report.n_rejected == 3
    (e,) = [e for e in v.report.errors if e.index == 1]
    assert e.field == "<row>" and e.reason.startswith("line 2: bad JSON")


def test_unknown_suffix(tmp_path):
    with pytest.raises(ValueError):
        write_rows(tmp_path / "x.csv", iter([]))


def test_published_files_are_not_private(tmp_path):
    # mkstemp makes 0600 temp files; the published file must follow the umask like open() would
    write_rows(tmp_path / "x.jsonl", iter(_rows(2)))
    (tmp_path / "ref").write_text("x")
    assert (tmp_path / "x.jsonl").stat().st_mode & 0o777 == (tmp_path / "ref").stat().st_mode & 0o777
