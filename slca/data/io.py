"""Streaming row I/O for parquet (pyarrow record batches), JSON Lines and JSON arrays.

Readers yield one dict per row and hold one batch at a time; writers consume an iterator in
batches and publish the file atomically (temp file in the same folder, then os.replace), so a
crash never leaves a half-written output under the final name. pyarrow is imported lazily.

Decoding is per row: a line (or array element, or parquet row) that is not JSON, not UTF-8 or
nested too deeply becomes a `BadRow` placeholder that the validators reject by index, and the
rest of the file is still read. A file that cannot be read at all (missing, unknown suffix,
empty, not parquet) raises DataInputError with one line naming it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from slca.data import fastjson
from slca.data.errors import DataInputError, one_line, os_error
from slca.fileio import AtomicTarget, make_parents, remove_made

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
    raise DataInputError(f"{path}: unknown file type {suf or '(no suffix)'!r}: use .parquet, .jsonl or .json")


def check_readable(path: str | os.PathLike[str]) -> str:
    """The format of an input file; DataInputError when it is missing, not a file or of unknown type."""
    fmt = file_format(path)
    p = Path(path)
    if not p.exists():
        raise DataInputError(f"{path}: no such file")
    if not p.is_file():
        raise DataInputError(f"{path}: not a file")
    return fmt


def iter_batches(path: str | os.PathLike[str], *, batch_size: int = DEFAULT_BATCH,
                 columns: list[str] | None = None) -> Iterator[list[dict[str, Any]]]:
    """Rows of a file in lists of at most `batch_size` dicts."""
    fmt = check_readable(path)
    if fmt == "parquet":
        yield from _parquet_batches(path, batch_size, columns)
        return
    rows = _iter_json_rows(path, fmt)
    if columns is not None:
        rows = ({k: r.get(k) for k in columns} if isinstance(r, dict) else r for r in rows)
    while True:
        try:
            chunk = list(islice(rows, batch_size))
        except OSError as exc:  # a read that fails after the open (EIO, /proc/self/mem) names no file itself
            raise DataInputError(one_line(f"{path}: cannot read: {exc.strerror or type(exc).__name__}")) from None
        if not chunk:
            return
        yield chunk


def _parquet_error(path: str | os.PathLike[str], exc: BaseException, n_read: int | None = None) -> DataInputError:
    where = f" after row {n_read}" if n_read else ""
    return DataInputError(one_line(f"{path}: not a readable parquet file{where}: {exc}"))


def _open_parquet(path: str | os.PathLike[str]) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise _parquet_error(path, exc) from None


class CheckedRow(dict):
    """A row the reader vouches for: no lone surrogates, nested within slca.data.guard's cap, no
    NaN or Infinity.

    Parquet rows are decoded as strict UTF-8 by pyarrow, and their nesting is that of the file's
    schema, checked once per file, as is the absence of floating-point columns (the only place a
    non-finite number can sit); so validation need not walk each of them again (the walk is the
    costliest part of checking a row). Behaves exactly like the dict it copies.
    """

    __slots__ = ()


def _type_depth(t: Any) -> int:
    """Nesting of Python values pyarrow builds for arrow type `t` (containers on the deepest path)."""
    import pyarrow.types as pt

    if pt.is_struct(t):
        return 1 + max((_type_depth(t.field(i).type) for i in range(t.num_fields)), default=0)
    if pt.is_map(t):  # a list of (key, value) tuples
        return 2 + max(_type_depth(t.key_type), _type_depth(t.item_type))
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_fixed_size_list(t):
        return 1 + _type_depth(t.value_type)
    if pt.is_dictionary(t):
        return _type_depth(t.value_type)
    return 0


def _holds_floats(t: Any) -> bool:
    """True when arrow type `t` has a floating-point value anywhere (one may be NaN or infinite)."""
    import pyarrow.types as pt

    if pt.is_floating(t):
        return True
    if pt.is_struct(t):
        return any(_holds_floats(t.field(i).type) for i in range(t.num_fields))
    if pt.is_map(t):
        return _holds_floats(t.key_type) or _holds_floats(t.item_type)
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_fixed_size_list(t):
        return _holds_floats(t.value_type)
    if pt.is_dictionary(t):
        return _holds_floats(t.value_type)
    return False


def _parquet_batches(path: str | os.PathLike[str], batch_size: int,
                     columns: list[str] | None) -> Iterator[list[dict[str, Any]]]:
    import pyarrow as pa

    from slca.data.guard import MAX_DEPTH

    n = 0
    with _open_parquet(path) as pf:
        # one thread: pyarrow's pool costs more CPU than it saves on record-batch reads
        batches = pf.iter_batches(batch_size=batch_size, columns=columns, use_threads=False)
        vouched: bool | None = None
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            except (OSError, pa.ArrowException) as exc:  # garbled pages, a truncated row group
                raise _parquet_error(path, exc, n) from None
            if vouched is None:
                vouched = 1 + max((_type_depth(f.type) for f in batch.schema), default=0) <= MAX_DEPTH \
                    and not any(_holds_floats(f.type) for f in batch.schema)
            try:
                rows = batch.to_pylist()
            except UnicodeDecodeError:
                rows = _rows_one_by_one(batch, n)
            if vouched:
                rows = [CheckedRow(r) if type(r) is dict else r for r in rows]
            n += len(rows)
            yield rows


def _rows_one_by_one(batch: Any, start: int) -> list[Any]:
    """A batch holding text that is not UTF-8: decode row by row, the bad rows as BadRow."""
    rows: list[Any] = []
    for i in range(batch.num_rows):
        one = batch.slice(i, 1)
        try:
            rows.append(one.to_pylist()[0])
        except UnicodeDecodeError:
            bad = [name for name, col in zip(one.schema.names, one.columns) if not _decodes(col)]
            rows.append(BadRow(f"row {start + i}", f"column {', '.join(bad)}: text that is not valid UTF-8"))
    return rows


def _decodes(column: Any) -> bool:
    try:
        column.to_pylist()
    except UnicodeDecodeError:
        return False
    return True


def _decode(raw: bytes, where: str) -> Any:
    try:
        return fastjson.loads(raw)
    except fastjson.NonFiniteNumber as exc:
        return BadRow(where, exc.reason, field=exc.path)
    except fastjson.JSONDecodeError:
        pass
    # Bytes that are not UTF-8 become lone surrogates, so the row is rejected naming the field
    # that holds them (slca.data.guard) instead of the whole file failing to decode.
    try:
        return fastjson.loads(raw.decode("utf-8", "surrogateescape"))
    except fastjson.NonFiniteNumber as exc:
        return BadRow(where, exc.reason, field=exc.path)
    except fastjson.JSONDecodeError as exc:
        return BadRow(where, f"bad JSON: {exc.msg}" + (f" (char {exc.pos})" if exc.pos else ""))


def _iter_json_rows(path: str | os.PathLike[str], fmt: str) -> Iterator[Any]:
    if fmt == "json":
        yield from _json_array_rows(path)
        return
    with open(path, "rb") as fh:
        for lineno, line in enumerate(fh):
            if lineno == 0 and line.startswith(_BOM):
                line = line[len(_BOM):]
            if not line.strip():
                continue
            # a broken line is a bad row, not a crash: the validator reports it by index
            yield _decode(line, f"line {lineno + 1}")


_BOM = b"\xef\xbb\xbf"
# a JSON string (unrolled, so long strings are matched in C), or one structural character
_ARRAY_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]')


def _json_array_rows(path: str | os.PathLike[str]) -> Iterator[Any]:
    """Rows of a JSON array file. It must be parsed whole; when that fails, each element is
    decoded on its own so one bad element is one bad row."""
    data = Path(path).read_bytes()
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    if not data.strip():
        raise DataInputError(f"{path}: empty file (expected a JSON array of rows)")
    try:
        value = fastjson.loads(data)
    except fastjson.JSONDecodeError:
        text = data.decode("utf-8", "surrogateescape")
        for k, (start, end) in enumerate(_array_elements(path, text)):
            yield _decode(text[start:end].encode("utf-8", "surrogateescape"), f"element {k}")
        return
    if not isinstance(value, list):
        raise DataInputError(f"{path}: expected a JSON array of rows, got a JSON {type(value).__name__}")
    yield from value


def _array_elements(path: str | os.PathLike[str], text: str) -> list[tuple[int, int]]:
    """(start, end) of each top-level element of a JSON array text, found by bracket depth
    (strings skipped), without decoding the elements."""
    spans: list[tuple[int, int]] = []
    depth, start, end = 0, -1, -1
    for m in _ARRAY_TOKENS.finditer(text):
        tok = m.group()
        if end >= 0:
            break
        if depth == 0:
            if tok != "[" or text[: m.start()].strip():
                raise DataInputError(f"{path}: not a JSON array of rows")
            depth, start = 1, m.end()
        elif tok in "[{":
            depth += 1
        elif tok in "]}":
            depth -= 1
            if depth == 0:
                end = m.end()
                if text[start: m.start()].strip():
                    spans.append((start, m.start()))
        elif tok == "," and depth == 1:
            spans.append((start, m.start()))
            start = m.end()
    if start < 0:
        raise DataInputError(f"{path}: not a JSON array of rows")
    if end < 0:
        raise DataInputError(f"{path}: the JSON array is not closed (truncated file?)")
    if text[end:].strip():
        raise DataInputError(f"{path}: text after the closing ] of the JSON array (char {end})")
    return spans


class BadRow(str):
    """Placeholder row for an undecodable record (a str, so validators reject it by type);
    `field` is the field at fault when it is known ("" = the record as a whole)."""

    bad_json = True

    def __new__(cls, where: str, msg: str, *, field: str = "") -> BadRow:
        row = super().__new__(cls, f"{where}: {msg}")
        row.field = field
        return row


def read_rows(path: str | os.PathLike[str], *, batch_size: int = DEFAULT_BATCH,
              columns: list[str] | None = None, allow_empty: bool = True) -> Iterator[dict[str, Any]]:
    """Rows of a parquet / jsonl / json file, one dict at a time, streaming in batches.

    allow_empty=False: a file without a single row (0 bytes, blank lines, `[]`, a parquet file
    with no rows) raises DataInputError naming it once the stream ends, so a command never
    reports "0 rows" as success or publishes an empty output."""
    n = 0
    for batch in iter_batches(path, batch_size=batch_size, columns=columns):
        n += len(batch)
        yield from batch
    if not n and not allow_empty:
        raise DataInputError(f"{path}: empty input: the file holds no rows")


def count_rows(path: str | os.PathLike[str]) -> int:
    """Row count (parquet: from metadata, without reading the data)."""
    if check_readable(path) == "parquet":
        with _open_parquet(path) as pf:
            return pf.metadata.num_rows
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
        self._buf_start = 0  # index of the first buffered row, for error messages
        self._writer: Any = None
        self._fh: Any = None
        try:
            self._made = make_parents(self.path)  # removed again by abort(): a failed command leaves no folder
            # Streamed outputs are not fsynced (as before); a rerun rewrites them.
            self._target = AtomicTarget(self.path, fsync=False)
        except OSError as exc:
            remove_made(getattr(self, "_made", []))
            raise os_error(exc, self.path) from None
        self._tmp = self._target.tmp
        if self.fmt != "parquet":
            try:
                self._fh = open(self._tmp, "wb", buffering=1 << 20)  # rows are ~10 kB: avoid a syscall per row
            except OSError as exc:
                self._target.discard()
                remove_made(self._made)
                raise os_error(exc, self.path) from None
            if self.fmt == "json":
                self._fh.write(b"[")

    def write(self, row: dict[str, Any]) -> None:
        if self._fh is not None:
            try:
                line = self._line(row, _json_default)
            except (TypeError, ValueError, RecursionError) as exc:  # UnicodeEncodeError is a ValueError
                raise DataInputError(one_line(f"{self.path}: cannot write row {self.n}: {exc}")) from None
            try:
                if self.fmt == "json":
                    self._fh.write(b",\n" if self.n else b"\n")
                    self._fh.write(line[:-1])
                else:
                    self._fh.write(line)
            except OSError as exc:
                raise os_error(exc, self.path) from None
        else:
            if not self._buf:
                self._buf_start = self.n
            self._buf.append(row)
            if len(self._buf) >= self.batch_size:
                self._flush()
        self.n += 1

    def _flush(self) -> None:
        if not self._buf:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        first = self._buf_start
        try:
            table = pa.Table.from_pylist(self._buf, schema=self.schema)
            if self._writer is None:
                self.schema = table.schema
                self._writer = pq.ParquetWriter(self._tmp, self.schema, compression=self.compression)
            self._writer.write_table(table)
        except OSError as exc:
            raise os_error(exc, self.path) from None
        except (pa.ArrowException, TypeError, ValueError, OverflowError, RecursionError) as exc:
            cell = self._unwritable_cell()
            where = f"rows {first}-{first + len(self._buf) - 1}" if cell is None else f"row {first + cell[0]}, field {cell[1]}"
            raise DataInputError(one_line(f"{self.path}: cannot write {where} as parquet: {exc}")) from None
        self._buf = []

    def _unwritable_cell(self) -> tuple[int, str] | None:
        """(position in the buffer, column) of the first value pyarrow refuses on its own, such as an
        integer beyond 64 bits (parquet has no wider integer; .jsonl keeps it exactly); None when
        only the rows together fail (e.g. one column with two types)."""
        import pyarrow as pa

        names = set(self.schema.names) if self.schema is not None else set()
        for k, row in enumerate(self._buf):
            for name, value in (row.items() if isinstance(row, dict) else ()):
                try:
                    pa.array([value], type=self.schema.field(name).type if name in names else None)
                except (pa.ArrowException, TypeError, ValueError, OverflowError, RecursionError):
                    return k, str(name)
        return None

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
                        raise DataInputError(f"{self.path}: no rows to write, and an empty parquet needs a schema "
                                             "(write .jsonl instead)")
                    import pyarrow.parquet as pq

                    self._writer = pq.ParquetWriter(self._tmp, self.schema, compression=self.compression)
                self._writer.close()
            self._target.commit()
        except OSError as exc:
            self.abort()
            raise os_error(exc, self.path) from None
        except BaseException:
            self.abort()
            raise
        return self.n

    def abort(self) -> None:
        """Discard everything written; the final path is left untouched, folders made for it removed."""
        try:
            if self._fh is not None:
                self._fh.close()
            elif self._writer is not None:
                self._writer.close()
        except OSError:
            pass  # the temp file is dropped either way
        self._target.discard()
        remove_made(self._made)

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
