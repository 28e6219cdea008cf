"""Streaming row I/O for parquet (pyarrow record batches), JSON Lines and JSON arrays.

Readers yield one dict per row and hold one batch at a time; writers consume an iterator in
batches and publish the file atomically (temp file in the same folder, then os.replace), so a
crash never leaves a half-written output under the final name. pyarrow is imported lazily.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from slca.data import fastjson
from slca.fileio import AtomicTarget

DEFAULT_BATCH = 1024


def file_format(path: str | os.PathLike[str]) -> str:
    """`parquet`, `jsonl` or `json` from the file suffix."""
    suf = Path(path).suffix.lower()
    if suf in (".parquet", ".pq"):
        return "parquet"
    if suf in (".jsonl", ".ndjson"):
        return "jsonl"
    if suf == ".json":
        return "json"
    raise ValueError(f"cannot tell the format of {str(path)!r}: use .parquet, .jsonl or .json")


def iter_batches(path: str | os.PathLike[str], *, batch_size: int = DEFAULT_BATCH,
                 columns: list[str] | None = None) -> Iterator[list[dict[str, Any]]]:
    """Rows of a file in lists of at most `batch_size` dicts."""
    fmt = file_format(path)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        with pq.ParquetFile(path) as pf:
            # one thread: pyarrow's pool costs more CPU than it saves on record-batch reads
            for batch in pf.iter_batches(batch_size=batch_size, columns=columns, use_threads=False):
                yield batch.to_pylist()
        return
    rows = _iter_json_rows(path, fmt)
    if columns is not None:
        rows = ({k: r.get(k) for k in columns} if isinstance(r, dict) else r for r in rows)
    while True:
        chunk = list(islice(rows, batch_size))
        if not chunk:
            return
        yield chunk


def _iter_json_rows(path: str | os.PathLike[str], fmt: str) -> Iterator[Any]:
    if fmt == "json":
        # A JSON array must be parsed whole; the streaming formats are parquet and jsonl.
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a JSON array of rows")
        yield from data
        return
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh):
            if not line.strip():
                continue
            try:
                yield fastjson.loads(line)
            except json.JSONDecodeError as exc:
                # a broken line is a bad row, not a crash: the validator reports it by index
                yield _BadLine(lineno, exc.msg)


class _BadLine(str):
    """Placeholder row for an undecodable JSONL line (a str, so validators reject it by type)."""

    bad_json = True

    def __new__(cls, lineno: int, msg: str) -> _BadLine:
        return super().__new__(cls, f"line {lineno + 1}: bad JSON: {msg}")


def read_rows(path: str | os.PathLike[str], *, batch_size: int = DEFAULT_BATCH,
              columns: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """Rows of a parquet / jsonl / json file, one dict at a time, streaming in batches."""
    for batch in iter_batches(path, batch_size=batch_size, columns=columns):
        yield from batch


def count_rows(path: str | os.PathLike[str]) -> int:
    """Row count (parquet: from metadata, without reading the data)."""
    if file_format(path) == "parquet":
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows
    return sum(1 for _ in read_rows(path))


def _json_default(v: Any) -> Any:
    if hasattr(v, "tolist"):  # numpy scalars/arrays
        return v.tolist()
    raise TypeError(f"not JSON serialisable: {type(v).__name__}")


class RowWriter:
    """Push-style streaming writer: `write(row)` buffers up to `batch_size` rows, then flushes one
    record batch (parquet) or lines (jsonl/json). `close()` publishes the file atomically;
    `abort()` (or an exception inside `with`) removes the temp file. Use several at once to fan a
    stream out to many outputs.
    """

    def __init__(self, path: str | os.PathLike[str], schema: Any = None, *, batch_size: int = DEFAULT_BATCH,
                 compression: str = "zstd", json_style: str = "compact"):
        if json_style not in ("compact", "stdlib"):
            raise ValueError(f"json_style must be 'compact' or 'stdlib', got {json_style!r}")
        # "stdlib" reproduces json.dumps(row, ensure_ascii=False) byte for byte (reference files)
        self._line = fastjson.dumps_line if json_style == "compact" else _stdlib_line
        self.path = Path(path)
        self.fmt = file_format(path)
        self.schema, self.batch_size, self.compression = schema, batch_size, compression
        self.n = 0
        self._buf: list[dict[str, Any]] = []
        # Streamed outputs are not fsynced (as before); a rerun rewrites them.
        self._target = AtomicTarget(self.path, fsync=False)
        self._tmp = self._target.tmp
        self._writer: Any = None
        self._fh: Any = None
        if self.fmt != "parquet":
            self._fh = open(self._tmp, "wb", buffering=1 << 20)  # rows are ~10 kB: avoid a syscall per row
            if self.fmt == "json":
                self._fh.write(b"[")

    def write(self, row: dict[str, Any]) -> None:
        if self._fh is not None:
            if self.fmt == "json":
                self._fh.write(b",\n" if self.n else b"\n")
                self._fh.write(self._line(row, _json_default)[:-1])
            else:
                self._fh.write(self._line(row, _json_default))
        else:
            self._buf.append(row)
            if len(self._buf) >= self.batch_size:
                self._flush()
        self.n += 1

    def _flush(self) -> None:
        if not self._buf:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist(self._buf, schema=self.schema)
        if self._writer is None:
            self.schema = table.schema
            self._writer = pq.ParquetWriter(self._tmp, self.schema, compression=self.compression)
        self._writer.write_table(table)
        self._buf = []

    def close(self) -> int:
        """Flush, publish under the final name, return the row count."""
        try:
            if self._fh is not None:
                if self.fmt == "json":
                    self._fh.write(b"\n]\n")
                self._fh.close()
            else:
                self._flush()
                if self._writer is None:
                    if self.schema is None:
                        raise ValueError(f"{self.path}: no rows and no schema; cannot write an empty parquet")
                    import pyarrow.parquet as pq

                    self._writer = pq.ParquetWriter(self._tmp, self.schema, compression=self.compression)
                self._writer.close()
        except BaseException:
            self._target.discard()
            raise
        self._target.commit()
        return self.n

    def abort(self) -> None:
        """Discard everything written; the final path is left untouched."""
        if self._fh is not None:
            self._fh.close()
        elif self._writer is not None:
            self._writer.close()
        self._target.discard()

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def _stdlib_line(row: Any, default: Any) -> bytes:
    return (json.dumps(row, ensure_ascii=False, default=default) + "\n").encode("utf-8")


def write_rows(path: str | os.PathLike[str], rows: Iterable[dict[str, Any]], schema: Any = None, *,
               batch_size: int = DEFAULT_BATCH, compression: str = "zstd", json_style: str = "compact") -> int:
    """Write `rows` to `path` (format from the suffix) atomically; returns the number written.

    Parquet is written one record batch at a time with `schema` (a pyarrow.Schema) or, when None,
    the schema inferred from the first batch. An empty iterator still produces a valid file when
    a schema is given.
    """
    with RowWriter(path, schema, batch_size=batch_size, compression=compression, json_style=json_style) as w:
        for row in rows:
            w.write(row)
    return w.n
