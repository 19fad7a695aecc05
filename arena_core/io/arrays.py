"""Arrow arrays to NumPy and back through their buffers.

pyarrow converts Python and NumPy values by first importing pandas whenever it is installed
(``pyarrow.array``, ``pyarrow.scalar``, ``Array.to_numpy`` and ``fill_null`` all do): 0.45 s
in every process that reads or writes a table, paid by each worker of the streaming path, for a
library arena-core never uses. These functions build and read the buffers themselves.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

__all__ = [
    "ArrowText", "first_seen", "from_numpy", "is_text", "repeated", "string_buffers", "text_array", "to_numpy", "valid",
]  # fmt: skip


def valid(column: Any) -> np.ndarray | None:
    """Which rows of an Arrow array or chunked array hold a value (``None``: all of them)."""
    if not column.null_count:
        return None
    array = column.combine_chunks() if hasattr(column, "chunks") else column
    if array.buffers()[0] is None:  # the null type: no value anywhere
        return np.zeros(len(array), dtype=bool)
    bits = np.frombuffer(array.buffers()[0], dtype=np.uint8)
    return np.unpackbits(bits, count=array.offset + len(array), bitorder="little")[array.offset :].astype(bool)


def to_numpy(column: Any, null: Any = np.nan) -> np.ndarray:
    """An Arrow array or chunked array of numbers or booleans as a NumPy array, ``null`` where a
    row holds none (NaN, unless the caller keeps integers with an integer)."""
    import pyarrow

    array = column.combine_chunks() if isinstance(column, pyarrow.ChunkedArray) else column
    n, offset = len(array), array.offset
    data = array.buffers()[1]
    if pyarrow.types.is_boolean(array.type):
        bits = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
        values = np.unpackbits(bits, count=offset + n, bitorder="little")[offset:].astype(bool)
    else:
        dtype = np.dtype(array.type.to_pandas_dtype())  # a NumPy type; pandas is not imported
        values = np.frombuffer(data, dtype=dtype, count=offset + n)[offset:] if n else np.zeros(0, dtype)
    present = valid(array)
    return values if present is None else np.where(present, values, null)


def is_text(kind: Any) -> bool:
    """Whether an Arrow type is a string type (UTF-8, 32- or 64-bit offsets)."""
    import pyarrow

    return bool(pyarrow.types.is_string(kind) or pyarrow.types.is_large_string(kind))


def first_seen(column: Any) -> tuple[np.ndarray, list[Any]]:
    """An Arrow dictionary column (chunks of their own dictionaries too) as (a code per row, the
    values), as ``pyarrow.compute.dictionary_encode`` with nulls encoded gives them for the same
    text: values in the order rows first hold them, only those some row holds, a null one
    among them. A dictionary read from Parquet holds a row group's values in its writer's order,
    and the rows kept may not hold them all."""
    import pyarrow

    array = column.unify_dictionaries().combine_chunks() if isinstance(column, pyarrow.ChunkedArray) else column
    values = array.dictionary.to_pylist()
    n, null = len(array), len(values)
    codes = to_numpy(array.indices, null=null).astype(np.int64)
    first = np.full(null + 1, n, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if n else np.zeros(0, dtype=np.int64)
    np.minimum.at(first, codes[starts], starts)  # a value is first held where a run of it starts
    held = np.flatnonzero(first < n)
    order = held[np.argsort(first[held], kind="stable")]
    renumber = np.zeros(null + 1, dtype=np.int64)
    renumber[order] = np.arange(len(order))
    return renumber[codes], [values[k] if k < null else None for k in order.tolist()]


def string_buffers(column: Any) -> tuple[np.ndarray, np.ndarray]:
    """An Arrow string column's bytes: (``len + 1`` offsets, each row's bytes lying between two,
    into the data; the data), read from its buffers."""
    import pyarrow

    array = column.combine_chunks() if isinstance(column, pyarrow.ChunkedArray) else column
    array = array.cast(pyarrow.large_string())
    n = len(array)
    if n == 0:
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.uint8)
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64, count=array.offset + n + 1)[array.offset :]
    data = array.buffers()[2]
    return offsets, np.frombuffer(data, dtype=np.uint8, count=int(offsets[-1])) if data else np.zeros(0, np.uint8)


def from_numpy(values: np.ndarray) -> Any:
    """A NumPy array of numbers or booleans (no nulls) as an Arrow array, sharing its memory when
    it can."""
    import pyarrow

    values = np.ascontiguousarray(values)
    if values.dtype == bool:
        bits = np.packbits(values, bitorder="little")
        return pyarrow.Array.from_buffers(pyarrow.bool_(), len(values), [None, pyarrow.py_buffer(bits)])
    kind = pyarrow.from_numpy_dtype(values.dtype)
    return pyarrow.Array.from_buffers(kind, len(values), [None, pyarrow.py_buffer(values)])


def text_array(values: Sequence[str | None]) -> Any:
    """A few Python strings (``None``: null) as an Arrow string array (for a column of many,
    ``pyarrow.array`` converts faster, once pandas is imported)."""
    import pyarrow

    encoded = [b"" if v is None else v.encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    missing = np.array([v is None for v in values], dtype=bool)
    validity = pyarrow.py_buffer(np.packbits(~missing, bitorder="little")) if missing.any() else None
    buffers = [validity, pyarrow.py_buffer(offsets), pyarrow.py_buffer(b"".join(encoded))]
    return pyarrow.Array.from_buffers(pyarrow.string(), len(encoded), buffers, int(missing.sum()))


def repeated(value: str, count: int) -> Any:
    """``value`` ``count`` times as an Arrow string array (a hive key's column)."""
    import pyarrow

    codes = from_numpy(np.zeros(count, dtype=np.int32))
    return pyarrow.DictionaryArray.from_arrays(codes, text_array([value])).dictionary_decode()


class ArrowText(Sequence[str]):
    """An Arrow string column read as a sequence of Python strings, made when first read: a
    leaderboard never reads its runs' ids (half a million strings are 0.03 s), and a writer of
    Arrow or Parquet takes :attr:`array` as it is."""

    __slots__ = ("_values", "array")

    def __init__(self, column: Any) -> None:
        import pyarrow

        self.array = column.combine_chunks() if isinstance(column, pyarrow.ChunkedArray) else column
        self._values: list[str] | None = None

    def _list(self) -> list[str]:
        if self._values is None:
            self._values = self.array.to_pylist()
        return self._values

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, index: Any) -> Any:
        return self._list()[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, ArrowText)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are unhashable
