"""Submissions files read as Arrow tables: JSON Lines and Parquet, by pyarrow's multi-threaded
C++ readers (the ``arrow`` extra: ``pip install 'arena-core[arrow]'``).

On a 1,000,000-line JSONL file pyarrow gives typed columns in about 2 s, where decoding each
line with orjson and collecting its fields takes about 9 s. A table is only a fast way in: the
engine takes it as columns when every value passes the same checks a record passes, and
otherwise the file is read again record by record so that each bad record is reported with
its line (:func:`arena_core.io.readers.read_records`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from arena_core.io.decoding import InputError, open_binary

__all__ = [
    "LONGEST_TABLE_LINE", "NULL_IS_AN_ERROR", "TABLE_SUFFIXES", "arrow", "check_expansion", "read_table", "records_of_parquet",
    "records_of_table", "table_reader_refuses", "write_parquet", "decoded_text", "dictionary_text",
]  # fmt: skip

#: The files read as a table: JSON Lines (when pyarrow is installed) and Parquet (which needs it).
TABLE_SUFFIXES = (".jsonl", ".ndjson", ".parquet")


#: Per byte, how it moves the nesting depth: +1 for ``[`` and ``{``, -1 for ``]`` and ``}``.
_STEPS = np.zeros(256, dtype=np.int8)
_STEPS[[ord("["), ord("{")]] = 1
_STEPS[[ord("]"), ord("}")]] = -1


def arrow() -> Any | None:
    """The ``pyarrow`` module, or ``None`` when it is not installed."""
    try:
        import pyarrow
    except ImportError:
        return None
    return pyarrow


def _parquet_module() -> Any:
    if arrow() is None:
        raise InputError("reading or writing Parquet needs pyarrow: pip install 'arena-core[arrow]'")
    import pyarrow.parquet

    return pyarrow.parquet


def read_table(path: Path, *, task_id: str | None = None) -> Any | None:
    """The file as an Arrow table (only ``task_id``'s rows when given), or ``None`` when pyarrow
    is not installed or cannot read it as one table (types that change between rows, a line
    that is not an object, bytes that are not UTF-8): then the record reader says what is wrong.

    :raises InputError: a Parquet file pyarrow cannot read, or Parquet without pyarrow.
    """
    pa = arrow()
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        table = _read_parquet(path)
    elif pa is None:
        return None
    else:
        import pyarrow.json

        if table_reader_refuses(path, MAX_TABLE_DEPTH):
            return None
        try:
            table = pyarrow.json.read_json(path)
            table.validate(full=True)  # the reader lets bytes that are not UTF-8 into strings
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OSError):
            return None
    if task_id is not None and "task_id" in table.column_names:
        import pyarrow.compute

        table = table.filter(pyarrow.compute.equal(table["task_id"], task_id))
    return table


#: Parquet pages may expand this many times their stored size before a file is taken for a bomb
#: (real files expand a few times; a 66 KB file of one repeated string can claim 2 GB) ...
MAX_EXPANSION = 64
#: ... once they expand past this many bytes.
EXPANSION_FLOOR = 256 << 20
#: How deep a JSON Lines record may nest before pyarrow's C++ reader is not given the file
#: (its recursive parser crashes the process on a line 50,000 deep; the record reader refuses it).
MAX_TABLE_DEPTH = 1000


def _read_parquet(path: Path) -> Any:
    parquet = _parquet_module()
    try:
        handle = parquet.ParquetFile(path)
        metadata = handle.metadata
    except Exception as exc:
        raise InputError(f"{path}: not a readable Parquet file: {exc}") from None
    size = path.stat().st_size
    check_expansion(path, metadata, size)
    coded = dictionary_text(metadata, handle.schema_arrow, range(metadata.num_row_groups))
    try:
        table = parquet.read_table(path, read_dictionary=coded or None)
    except Exception as exc:  # pyarrow raises several kinds (ArrowInvalid, OSError, ...) for a bad file
        raise InputError(f"{path}: not a readable Parquet file: {exc}") from None
    table = decoded_text(path, table, size)
    try:
        table.validate(full=True)  # strings that are not UTF-8 are refused here, not met later
    except Exception as exc:
        raise InputError(f"{path}: not a readable Parquet file: {exc}") from None
    return table


def dictionary_text(
    metadata: Any, schema: Any, groups: Iterable[int], columns: Iterable[str] | None = None
) -> list[str]:
    """The text columns (of ``columns``, else all) stored with a dictionary page in one of the
    row groups ``groups``: read as Arrow dictionaries, their decoded size is known before it is
    held (:func:`decoded_text`)."""
    pa = arrow()
    assert pa is not None
    names = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
             or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]  # fmt: skip
    wanted = set(names if columns is None else columns) & set(names)
    found: set[str] = set()
    for group in groups:
        row_group = metadata.row_group(group)
        for index in range(row_group.num_columns):
            chunk = row_group.column(index)
            if chunk.path_in_schema in wanted and chunk.has_dictionary_page:
                found.add(chunk.path_in_schema)
    return sorted(found)


def decoded_text(name: str | Path, table: Any, stored: int, keep: Iterable[str] = ()) -> Any:
    """``table`` with its dictionary columns of text decoded (but those of ``keep``), once their
    decoded size is known to stay within :data:`MAX_EXPANSION` times the ``stored`` bytes they
    came from (and :data:`EXPANSION_FLOOR`): a dictionary of one long string and a million
    indices to it is a few kilobytes in the file, and gigabytes decoded.

    :raises InputError: naming the file as a decompression bomb.
    """
    pa = arrow()
    assert pa is not None
    import pyarrow.compute as pc

    kept = set(keep)
    targets = [
        i for i, f in enumerate(table.schema)
        if pa.types.is_dictionary(f.type) and f.name not in kept
        and not (pa.types.is_integer(f.type.value_type) or pa.types.is_floating(f.type.value_type))
    ]  # fmt: skip
    decoded = 0
    for index in targets:
        for chunk in table.column(index).chunks:
            if len(chunk):
                lengths = pc.binary_length(chunk.dictionary).cast(pa.int64())
                decoded += pc.sum(pc.take(lengths, chunk.indices)).as_py() or 0
    if decoded > EXPANSION_FLOOR and decoded > MAX_EXPANSION * stored:
        raise InputError(
            f"{name}: its text decodes to {decoded:,} bytes, over {MAX_EXPANSION} times the file's size: "
            "refused as a decompression bomb"
        )
    for index in targets:
        field = table.schema.field(index)
        table = table.set_column(index, field.name, table.column(index).cast(field.type.value_type))
    return table


def check_expansion(name: str | Path, metadata: Any, size: int) -> None:
    """Refuse a Parquet file whose pages, by its footer, expand past :data:`MAX_EXPANSION` times
    its ``size`` (and :data:`EXPANSION_FLOOR`), before any page is read.

    :raises InputError: naming the file as a decompression bomb.
    """
    expanded = sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))
    if expanded > EXPANSION_FLOOR and expanded > MAX_EXPANSION * size:
        raise InputError(
            f"{name}: its pages expand to {expanded:,} bytes, over {MAX_EXPANSION} times the file's size: "
            "refused as a decompression bomb"
        )


#: Fields whose null is not an absent value but a hole: a null ``success`` would otherwise take
#: the field's default (a pass), where JSON Lines refuses ``"success": null``.
NULL_IS_AN_ERROR = frozenset({"success"})


def records_of_table(table: Any) -> list[dict[str, Any]]:
    """Every row of an Arrow table as a record for the record reader: nulls as absent fields,
    but for those of :data:`NULL_IS_AN_ERROR`, kept so that the record is refused."""
    return [{k: v for k, v in row.items() if v is not None or k in NULL_IS_AN_ERROR} for row in table.to_pylist()]


def records_of_parquet(path: Path) -> list[dict[str, Any]]:
    """Every row of a Parquet file as a record (see :func:`records_of_table`)."""
    return records_of_table(_read_parquet(path))


def write_parquet(columns: dict[str, Any], out: Any) -> None:
    """Write columns (name to array or list) to the binary stream ``out`` as Parquet."""
    pa = arrow()
    parquet = _parquet_module()
    assert pa is not None
    parquet.write_table(pa.table(columns), out)


def table_reader_refuses(path: Path, limit: int, chunk: int = 8 << 20) -> bool:
    """Whether Arrow's JSON reader must not be given the file: some line opens brackets more than
    ``limit`` deep (its C++ reader recurses: 50,000 levels crash it), or some line holds
    something other than an object (a first line ``null`` crashes it with a segmentation
    fault). Only a line longer than ``limit`` bytes can nest that deep, so only such lines are
    counted (brackets inside strings count too: a line can be taken for deeper than it is,
    never for shallower, and then goes to the record reader, which is exact). A block's lines are
    found and their first bytes read at once; only a line that does not open with ``{``, or is
    longer than ``limit``, is looked at alone (a loop over every line took 0.3 s for 300,000).
    A line longer than :data:`LONGEST_TABLE_LINE` is refused too: the reader grows its blocks
    to hold it, about 25 times its size (1.7 GB for a line of 70 MiB), where the record reader
    holds a few times a line and names one past its bound."""
    tail = b""
    with open_binary(path) as fh:
        while block := fh.read(chunk):
            data = tail + block
            ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == _NEWLINE)
            if not len(ends):
                if len(data) > LONGEST_TABLE_LINE:
                    return True
                tail = data
                continue
            starts = np.r_[0, ends[:-1] + 1]
            lengths = ends - starts
            if int(lengths.max()) > LONGEST_TABLE_LINE:
                return True
            first = np.frombuffer(data, dtype=np.uint8)[starts]  # a blank line's is its newline
            doubtful = np.flatnonzero((first != _OPEN) | (lengths > limit)).tolist()
            if any(_refused(data[starts[i] : ends[i]], limit) for i in doubtful):
                return True
            tail = data[int(ends[-1]) + 1 :]
    return len(tail) > LONGEST_TABLE_LINE or _refused(tail, limit)


#: The longest line given to Arrow's JSON reader (a longer one sends the file to the record reader).
LONGEST_TABLE_LINE = 8 << 20


_NEWLINE, _OPEN = ord("\n"), ord("{")


def _refused(line: bytes, limit: int) -> bool:
    return (len(line) > limit and _depth(line) > limit) or not _object_or_blank(line)


def _object_or_blank(line: bytes) -> bool:
    return line[:1] == b"{" or not line.strip() or line.lstrip()[:1] == b"{"


def _depth(line: bytes) -> int:
    steps = _STEPS[np.frombuffer(line, dtype=np.uint8)].astype(np.int32)
    return int(np.cumsum(steps).max()) if len(steps) else 0
