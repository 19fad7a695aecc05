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

from arena_core.io.decoding import InputError

__all__ = ["TABLE_SUFFIXES", "arrow", "read_table", "records_of_parquet", "write_parquet"]

#: The files read as a table: JSON Lines (when pyarrow is installed) and Parquet (which needs it).
TABLE_SUFFIXES = (".jsonl", ".ndjson", ".parquet")


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

        try:
            table = pyarrow.json.read_json(path)
            table.validate(full=True)  # the reader lets bytes that are not UTF-8 into strings
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OSError):
            return None
    if task_id is not None and "task_id" in table.column_names:
        import pyarrow.compute

        table = table.filter(pyarrow.compute.equal(table["task_id"], task_id))
    return table


def _read_parquet(path: Path) -> Any:
    parquet = _parquet_module()
    try:
        table = parquet.read_table(path)
        table.validate(full=True)  # strings that are not UTF-8 are refused here, not met later
        return table
    except Exception as exc:  # pyarrow raises several kinds (ArrowInvalid, OSError, ...) for a bad file
        raise InputError(f"{path}: not a readable Parquet file: {exc}") from None


def records_of_parquet(path: Path) -> list[dict[str, Any]]:
    """Every row of a Parquet file as a record (nulls as absent fields), for the record reader."""
    return [{k: v for k, v in row.items() if v is not None} for row in _read_parquet(path).to_pylist()]


def write_parquet(columns: dict[str, Any], out: Any) -> None:
    """Write columns (name to array or list) to the binary stream ``out`` as Parquet."""
    pa = arrow()
    parquet = _parquet_module()
    assert pa is not None
    parquet.write_table(pa.table(columns), out)
