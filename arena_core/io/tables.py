"""Submissions files read as Arrow tables: JSON Lines and Parquet, by pyarrow's multi-threaded
C++ readers (the ``arrow`` extra: ``pip install 'arena-core[arrow]'``).

On a 1,000,000-line JSONL file pyarrow gives typed columns in about 2 s, where decoding each
line with orjson and collecting its fields takes about 9 s. A table is only a fast way in: the
engine takes it as columns when every value passes the same checks a record passes, and
otherwise the file is read again record by record so that each bad record is reported with
its line (:func:`arena_core.io.readers.read_records`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from arena_core.io.decoding import InputError, open_binary

__all__ = [
    "TABLE_SUFFIXES", "arrow", "check_expansion", "nests_deeper", "read_table", "records_of_parquet", "write_parquet",
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

        if nests_deeper(path, MAX_TABLE_DEPTH):
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
        metadata = parquet.ParquetFile(path).metadata
    except Exception as exc:
        raise InputError(f"{path}: not a readable Parquet file: {exc}") from None
    check_expansion(path, metadata, path.stat().st_size)
    try:
        table = parquet.read_table(path)
        table.validate(full=True)  # strings that are not UTF-8 are refused here, not met later
        return table
    except Exception as exc:  # pyarrow raises several kinds (ArrowInvalid, OSError, ...) for a bad file
        raise InputError(f"{path}: not a readable Parquet file: {exc}") from None


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


def records_of_parquet(path: Path) -> list[dict[str, Any]]:
    """Every row of a Parquet file as a record (nulls as absent fields), for the record reader."""
    return [{k: v for k, v in row.items() if v is not None} for row in _read_parquet(path).to_pylist()]


def write_parquet(columns: dict[str, Any], out: Any) -> None:
    """Write columns (name to array or list) to the binary stream ``out`` as Parquet."""
    pa = arrow()
    parquet = _parquet_module()
    assert pa is not None
    parquet.write_table(pa.table(columns), out)


def nests_deeper(path: Path, limit: int, chunk: int = 8 << 20) -> bool:
    """Whether some line of the file opens brackets more than ``limit`` deep. Only a line longer
    than ``limit`` bytes can, so only such lines are counted (brackets inside strings count
    too: a line can be taken for deeper than it is, never for shallower, and then goes to the
    record reader, which is exact). About 0.2 s for 200 MB of ordinary lines."""
    tail = b""
    with open_binary(path) as fh:
        while block := fh.read(chunk):
            lines = (tail + block).split(b"\n")
            tail = lines.pop()
            if any(len(line) > limit and _depth(line) > limit for line in lines):
                return True
    return len(tail) > limit and _depth(tail) > limit


def _depth(line: bytes) -> int:
    steps = _STEPS[np.frombuffer(line, dtype=np.uint8)].astype(np.int32)
    return int(np.cumsum(steps).max()) if len(steps) else 0
