"""Arrow tables (and the frames that speak Arrow: pandas, polars) to columns, with the records'
validation done on whole columns.

A table is taken only when every value passes what a record must pass (the same bounds, names,
types and cross-field rules as :mod:`arena_core.engine.records`); anything a table cannot say
exactly (a null that could be an absent field or an explicit ``null``, a type that is not a
number) makes :func:`columns_from_table` return ``None``, and the caller reads the rows as
records, which words the error for the row at fault.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena_core.engine.columns import NUMERIC_FIELDS, Coded, Columns, bad_figures
from arena_core.engine.nesting import type_depth
from arena_core.engine.records import KNOWN_FIELDS, inconsistent, run_detail, valid_names
from arena_core.io.arrays import ArrowText, first_seen, from_numpy, is_text, string_buffers, to_numpy
from arena_core.model.records import MAX_NAME_LENGTH, RUN_DETAILS
from arena_core.model.scalars import MAX_NESTING

__all__ = ["CODED_TEXT", "columns_from_table", "table_of"]

_NAMES = ("id", "task_id", "tool", "model")
#: The text columns held as codes: a reader may hand them over as Arrow dictionaries.
CODED_TEXT = _NAMES[1:]


def table_of(data: Any) -> Any | None:
    """``data`` as a ``pyarrow.Table`` when it is one, or a frame or stream that exports Arrow
    (pandas and polars frames, anything with ``__arrow_c_stream__``); else ``None``."""
    try:
        import pyarrow
    except ImportError:
        return None
    if isinstance(data, pyarrow.Table):
        return data
    if hasattr(data, "__arrow_c_stream__") or type(data).__module__.startswith("pandas"):
        return pyarrow.table(data)
    return None


def columns_from_table(table: Any, *, strict: bool = False) -> Columns | None:
    """The table's rows as :class:`Columns`, or ``None`` when a row must be read as a record (to
    be refused with its own error, or because a null cannot say whether a field was absent)."""
    import pyarrow
    import pyarrow.compute as pc

    names = set(table.column_names)
    if {"workspace", "workspace_ref"} & names or (strict and not names <= KNOWN_FIELDS) or "id" not in names:
        return None
    n = table.num_rows
    text: dict[str, Any] = {}
    for name in _NAMES:
        if name not in names or (pyarrow.types.is_null(table[name].type) and name != "id"):
            text[name] = Coded(np.zeros(n, dtype=np.int64), [None] if n else [])
            continue
        column = table[name]
        if name != "id" and pyarrow.types.is_dictionary(column.type) and is_text(column.type.value_type):
            codes, distinct = first_seen(column)  # read coded: Parquet's dictionary pages
            if not valid_names([v for v in distinct if v is not None]):
                return None
            text[name] = Coded(codes, distinct)
            continue
        if not is_text(column.type):
            return None
        if name == "id":  # distinct (or refused later): the values themselves
            if column.null_count or not (_printable_ascii_names(column) or valid_names(column.to_pylist())):
                return None
            text[name] = ArrowText(column)
            continue
        encoded = pc.dictionary_encode(column, null_encoding="encode").combine_chunks()  # a null: a value
        distinct = encoded.dictionary.to_pylist()
        if not valid_names([v for v in distinct if v is not None]):
            return None
        text[name] = Coded(to_numpy(encoded.indices).astype(np.int64), distinct)  # first-seen order, as factorize
    for name in names.intersection(RUN_DETAILS):  # checked as the records' path checks them; not scored
        column = table[name]
        if pyarrow.types.is_null(column.type):
            continue
        if not is_text(column.type):
            return None
        if not all(run_detail(name, v) for v in pc.unique(column).to_pylist()):
            return None
    numeric: dict[str, np.ndarray] = {}
    for name in NUMERIC_FIELDS:
        if name not in names:
            continue
        column = table[name]
        kind = column.type
        if pyarrow.types.is_null(kind):
            continue
        if not (pyarrow.types.is_integer(kind) or pyarrow.types.is_floating(kind)):
            return None
        values = to_numpy(column).astype(float, copy=False)  # doubles without nulls: Arrow's memory, read-only
        if pyarrow.types.is_floating(kind) and (
            pc.any(pc.is_nan(column)).as_py() if column.null_count else len(values) and np.isnan(values.min())
        ):
            return None  # a NaN given as such (a null is an absent figure); without nulls, the minimum is NaN
        if bad_figures(values, name, whole=pyarrow.types.is_integer(kind)).any():
            return None
        numeric[name] = values
    if inconsistent(numeric, n).any():
        return None
    success = None
    if "success" in names:
        column = table["success"]
        if not pyarrow.types.is_boolean(column.type) or column.null_count:
            return None
        success = to_numpy(column)
    files = None
    if "files_created" in names:
        files = _file_lists(table["files_created"])
        if files is None:
            return None
    if "meta" in names and not (
        pyarrow.types.is_struct(table["meta"].type) or pyarrow.types.is_map(table["meta"].type)
    ):
        return None
    held = [type_depth(table[name].type) + 1 for name in names - KNOWN_FIELDS]  # unknown keys go under meta
    if max([*held, type_depth(table["meta"].type) if "meta" in names else 0]) > MAX_NESTING:
        return None  # some meta may nest deeper than the model takes: its record is refused
    return Columns(
        text["id"],
        text["task_id"],
        numeric,
        tools=text["tool"],
        models=text["model"],
        success=success,
        files_created=files,
    )


def _printable_ascii_names(column: Any) -> bool:
    """Whether every value is printable ASCII, not blank and not over the length limit: what
    :func:`valid_names` says of such text, read from the bytes at once (``False``: ask it)."""
    offsets, data = string_buffers(column)
    if len(offsets) == 1:
        return True
    data = data[offsets[0] :]
    lengths = np.diff(offsets)
    # One comparison a byte: below 0x20, the subtraction wraps past 0x5E.
    if (
        not ((data - np.uint8(0x20)) <= np.uint8(0x7E - 0x20)).all()
        or lengths.min() < 1
        or lengths.max() > MAX_NAME_LENGTH
    ):
        return False
    space = data == 0x20
    if not space.any():
        return True
    spaces = np.concatenate([[0], np.cumsum(space)])  # a blank name: spaces only
    return not (spaces[offsets[1:] - offsets[0]] - spaces[offsets[:-1] - offsets[0]] == lengths).any()


def _file_lists(column: Any) -> Coded | None:
    """Each row's ``files_created`` as a tuple (the distinct lists built once), or ``None`` when a
    row holds anything but a list of strings.

    Lists are told apart by their names' codes, a position at a time: a list's code is the code
    of the pair (its list without the last name, its last name), so equal lists share a code
    and no two others do, whatever the names hold; each distinct list is then read once."""
    import pyarrow
    import pyarrow.compute as pc

    kind = column.type
    if column.null_count or not (pyarrow.types.is_list(kind) or pyarrow.types.is_large_list(kind)):
        return None
    if not pyarrow.types.is_string(kind.value_type) and not pyarrow.types.is_null(kind.value_type):
        return None
    array = column.combine_chunks() if isinstance(column, pyarrow.ChunkedArray) else column
    flat = pc.list_flatten(array)
    if flat.null_count:
        return None
    encoded = pc.dictionary_encode(flat)
    names = to_numpy(encoded.indices).astype(np.int64)  # numbered in the order they first appear
    offsets = to_numpy(array.offsets).astype(np.int64)
    starts, lengths = offsets[:-1] - offsets[0], np.diff(offsets)  # each list's names in ``flat``
    if len(lengths) and lengths.min() == lengths.max() == 1:  # one name a row: its list's code is its name's
        return Coded(names, [(name,) for name in encoded.dictionary.to_pylist()])
    key = np.zeros(len(lengths), dtype=np.int64)  # 0: the empty list
    active = np.flatnonzero(lengths > 0)
    key[active] = 1 + names[starts[active]]
    used = 1 + len(encoded.dictionary)
    for position in range(1, int(lengths.max(initial=0))):
        active = active[lengths[active] > position]
        pair_codes = _codes(from_numpy(key[active] * (len(flat) + 1) + names[starts[active] + position]))
        key[active] = used + pair_codes
        used += int(pair_codes.max(initial=-1)) + 1
    codes = _codes(from_numpy(key))  # numbered in the order rows first hold them
    seen = np.maximum.accumulate(codes) if len(codes) else codes
    firsts = np.flatnonzero(np.r_[True, seen[1:] > seen[:-1]]) if len(codes) else codes
    distinct = [tuple(files) for files in array.take(from_numpy(firsts)).to_pylist()]
    return Coded(codes, distinct)


def _codes(values: Any) -> np.ndarray:
    """An Arrow array's values as codes, numbered in the order rows first hold them (hashed)."""
    import pyarrow.compute as pc

    return to_numpy(pc.dictionary_encode(values).indices).astype(np.int64)
