"""Parquet runs read a few row groups at a time: one file, several, or a folder of them (hive
partitions included), on this machine or in object storage (``s3://``, ``gs://``, ``hf://`` and
any fsspec URL, with the ``remote`` extra).

The streaming path (:mod:`arena_core.streaming`) never holds its whole input: it reads a column
or two of every row group to plan, then whole row groups (or a spill file) a partition at a
time, in worker processes that reopen the input from a :class:`Source`, which pickles small.
Every row read carries its number in the whole input (``__row``), so a bad record is named by
its file and record number as the in-memory reader names it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from attrs import frozen

from arena_core.io.arrays import first_seen, from_numpy, is_text, repeated, text_array, to_numpy
from arena_core.io.decoding import InputError
from arena_core.io.locations import parquet_files, path_of
from arena_core.io.shards import partition_keys
from arena_core.io.tables import arrow, check_expansion, decoded_text, dictionary_text

__all__ = ["ROW", "Piece", "Source", "by_file", "conform", "open_source", "rows_of_tasks"]

#: The column every row read carries: its number in the whole input, from 0.
ROW = "__row"


@frozen
class Piece:
    """One row group of one file."""

    file: int
    """Index of its file in :attr:`Source.names`."""
    group: int
    rows: int
    start: int
    """The input's row number of its first row."""
    record: int
    """Its first row's record number in its file (from 1), as messages count."""


@frozen
class Source:
    """The row groups of a set of Parquet files, and how to read them again anywhere."""

    names: tuple[str, ...]
    """Each file's path or URL, as messages name it, in input order."""
    keys: tuple[tuple[tuple[str, str], ...], ...]
    """Each file's hive partition keys (``task_id=T`` folders), given to its rows as text."""
    pieces: tuple[Piece, ...]
    schema: Any
    """The files' schemas unified, the partition keys and ``__row`` added: every table read has it."""
    stored: tuple[frozenset[str], ...]
    """Each file's own columns (its partition keys are not among them)."""
    filesystem: Any = None
    """The fsspec filesystem of remote files, ``None`` for local ones."""
    paged: tuple[frozenset[str], ...] = ()
    """Each file's text columns stored with dictionary pages: always read as dictionaries, so
    that what they decode to is known before it is held (:func:`~arena_core.io.tables.decoded_text`)."""

    @property
    def rows(self) -> int:
        return sum(p.rows for p in self.pieces)

    def where(self, row: int) -> str:
        """``FILE: record N`` of the input's row ``row``."""
        starts = [p.start for p in self.pieces]
        piece = self.pieces[int(np.searchsorted(starts, row, side="right")) - 1]
        return f"{self.names[piece.file]}: record {piece.record + row - piece.start}"

    def read(
        self,
        pieces: Sequence[Piece],
        columns: Sequence[str] | None = None,
        *,
        coded: Sequence[str] = (),
        head: int | None = None,
    ) -> Any:
        """The rows of ``pieces`` (in order) as one table of :attr:`schema` (or of ``columns`` and
        ``__row``), UTF-8 checked.

        :param coded: text columns read as Arrow dictionaries, as Parquet's dictionary pages hold
            them: a run's task or tool is not made a string per row only to be coded again.
        :param head: only this many rows of the last piece, its first: the rest is not decoded.
        :raises InputError: a file that cannot be read, or whose strings are not UTF-8.
        """
        pa = _pyarrow()
        target = self._target(columns)
        coded = [c for c in coded if c in target.names and is_text(target.field(c).type)]
        for name in coded:
            target = target.set(target.get_field_index(name), pa.field(name, pa.dictionary(pa.int32(), pa.string())))
        tables = []
        runs = list(by_file(pieces))
        for index, (file, run) in enumerate(runs):
            cut = head if index == len(runs) - 1 else None
            whole = run if cut is None else run[:-1]
            parts = [self._read_groups(file, [p.group for p in whole], columns, dictionary=coded)] if whole else []
            if cut is not None:
                parts.append(self._read_head(run[-1], cut, columns, dictionary=coded))
            counts = [p.rows for p in whole] + ([] if cut is None else [cut])
            rows = np.concatenate(
                [np.arange(p.start, p.start + n, dtype=np.int64) for p, n in zip(run, counts, strict=True)]
            )
            part = parts[0] if len(parts) == 1 else pa.concat_tables([conform(t, parts[0].schema) for t in parts])
            tables.append(conform(part.append_column(ROW, from_numpy(rows)), target))
        if not tables:
            return target.empty_table()
        return pa.concat_tables(tables)

    def batches(self, piece: Piece, size: int) -> Iterator[Any]:
        """The rows of ``piece`` a batch of at most ``size`` at a time (for spilling a row group
        that may itself be larger than memory), each a table of :attr:`schema`."""
        pa = _pyarrow()
        handle = self._open(piece.file)
        start = piece.start
        for batch in handle.iter_batches(batch_size=size, row_groups=[piece.group], use_threads=True):
            table = self._checked(handle, piece.file, [piece.group], pa.Table.from_batches([batch]), ())
            table = self._keyed(piece.file, table)
            rows = np.arange(start, start + table.num_rows, dtype=np.int64)
            start += table.num_rows
            yield conform(table.append_column(ROW, from_numpy(rows)), self.schema)

    def coded(self, pieces: Sequence[Piece], column: str) -> tuple[np.ndarray, list[Any]]:
        """A text column of consecutive row groups of one file as (a code per row, the distinct
        values): read as Parquet's dictionary pages hold it, without a string per row."""
        file = pieces[0].file
        keys = dict(self.keys[file])
        if column not in self.stored[file]:  # a hive key, or absent: one value
            return np.zeros(sum(p.rows for p in pieces), dtype=np.int64), [keys.get(column)]
        table = self._read_groups(file, [p.group for p in pieces], [column], dictionary=[column])
        values = table[column]
        if not _pyarrow().types.is_dictionary(values.type):  # a column of another type
            import pyarrow.compute as pc

            values = pc.dictionary_encode(values, null_encoding="encode")
        return first_seen(values)

    def _target(self, columns: Sequence[str] | None) -> Any:
        if columns is None:
            return self.schema
        pa = _pyarrow()
        return pa.schema([self.schema.field(c) for c in [*columns, ROW] if c in self.schema.names])

    def _read_groups(
        self, file: int, groups: list[int], columns: Sequence[str] | None, *, dictionary: Sequence[str] = ()
    ) -> Any:
        """Row groups of one file, its keys added, UTF-8 checked (``dictionary``: text columns
        read as the dictionary pages hold them)."""
        keys = dict(self.keys[file])
        handle = self._open(file, read_dictionary=[c for c in dictionary if c in self.stored[file]])
        wanted = None if columns is None else [c for c in columns if c in self.stored[file]]
        try:
            table = handle.read_row_groups(groups, columns=wanted, use_threads=True)
        except Exception as exc:  # pyarrow raises several kinds for a damaged file
            raise InputError(f"{self.names[file]}: not a readable Parquet file: {exc}") from None
        if columns is not None:
            keys = {k: v for k, v in keys.items() if k in columns}
        return self._keyed(file, self._checked(handle, file, groups, table, dictionary), keys)

    def _read_head(self, piece: Piece, rows: int, columns: Sequence[str] | None, *, dictionary: Sequence[str]) -> Any:
        """The first ``rows`` of a row group, decoded that far only, its keys added, UTF-8 checked."""
        file = piece.file
        handle = self._open(file, read_dictionary=[c for c in dictionary if c in self.stored[file]])
        wanted = None if columns is None else [c for c in columns if c in self.stored[file]]
        batches, held = [], 0
        try:
            for batch in handle.iter_batches(
                batch_size=rows, row_groups=[piece.group], columns=wanted, use_threads=True
            ):
                batches.append(batch)
                held += batch.num_rows
                if held >= rows:
                    break
        except Exception as exc:  # pyarrow raises several kinds for a damaged file
            raise InputError(f"{self.names[file]}: not a readable Parquet file: {exc}") from None
        table = _pyarrow().Table.from_batches(batches).slice(0, rows)  # a row group holds them: never none
        keys = dict(self.keys[file])
        if columns is not None:
            keys = {k: v for k, v in keys.items() if k in columns}
        return self._keyed(file, self._checked(handle, file, [piece.group], table, dictionary), keys)

    def _checked(self, handle: Any, file: int, groups: list[int], table: Any, dictionary: Sequence[str]) -> Any:
        """A table read from row groups of one file: its dictionary text decoded (but the columns of
        ``dictionary``, wanted so) within the bound of what those row groups store, its UTF-8 checked."""
        metadata = handle.metadata
        stored = sum(
            metadata.row_group(g).column(i).total_compressed_size
            for g in groups
            for i in range(metadata.row_group(g).num_columns)
        )
        table = decoded_text(self.names[file], table, stored, keep=dictionary)
        _check_text(self.names[file], table)
        return table

    def _keyed(self, file: int, table: Any, keys: dict[str, str] | None = None) -> Any:
        """The table with its file's partition keys as columns (a column the file has wins)."""
        for key, value in (dict(self.keys[file]) if keys is None else keys).items():
            if key not in table.column_names:
                table = table.append_column(key, repeated(value, table.num_rows))
        return table

    def _open(self, file: int, read_dictionary: Sequence[str] = ()) -> Any:
        """The file, its text columns with dictionary pages (and ``read_dictionary``) read as dictionaries."""
        import pyarrow.parquet as pq

        name = self.names[file]
        coded = sorted({*read_dictionary, *(self.paged[file] if self.paged else ())}) or None
        try:
            if self.filesystem is None:
                return pq.ParquetFile(name, read_dictionary=coded)
            return pq.ParquetFile(self.filesystem.open(path_of(name), "rb"), read_dictionary=coded)
        except Exception as exc:
            raise InputError(f"{name}: not a readable Parquet file: {exc}") from None


def open_source(given: Sequence[str | Path]) -> Source:
    """The Parquet files ``given`` names (files, folders searched through, or URLs of either), their
    row groups counted from their footers, their schemas unified.

    :raises InputError: no Parquet file, a file that is not Parquet, a decompression bomb, a link in
        a folder, or columns whose types differ between files.
    """
    pa = _pyarrow()
    import pyarrow.parquet as pq

    filesystem, files = parquet_files(given)
    names, keys, pieces, schemas, stored, paged = [], [], [], [], [], []
    start = 0
    for index, (name, root) in enumerate(files):
        try:
            handle = pq.ParquetFile(name if filesystem is None else filesystem.open(path_of(name), "rb"))
            metadata = handle.metadata
        except Exception as exc:
            raise InputError(f"{name}: not a readable Parquet file: {exc}") from None
        check_expansion(
            name, metadata, Path(name).stat().st_size if filesystem is None else filesystem.size(path_of(name))
        )
        file_keys = tuple(partition_keys(Path(path_of(name)), Path(path_of(root))).items()) if root else ()
        record = 1
        for group in range(metadata.num_row_groups):
            rows = metadata.row_group(group).num_rows
            pieces.append(Piece(index, group, rows, start, record))
            start, record = start + rows, record + rows
        schema = handle.schema_arrow
        if ROW in schema.names:
            raise InputError(
                f"{name}: column {ROW!r}: the name arena-core gives each row's number while it streams a file; "
                "rename the column"
            )
        stored.append(frozenset(schema.names))
        paged.append(frozenset(dictionary_text(metadata, schema, range(metadata.num_row_groups))))
        for key, _ in file_keys:
            if key not in schema.names:
                schema = schema.append(pa.field(key, pa.string()))
        names.append(name)
        keys.append(file_keys)
        schemas.append(schema)
    try:
        unified = pa.unify_schemas(schemas, promote_options="default")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise InputError(f"{names[0]}: the files' columns differ in type: {exc}") from None
    row = unified.append(pa.field(ROW, pa.int64()))
    return Source(tuple(names), tuple(keys), tuple(pieces), row, tuple(stored), filesystem, tuple(paged))


def conform(table: Any, schema: Any) -> Any:
    """``table`` with exactly ``schema``'s columns, in its order: a column it lacks is null.

    :raises InputError: a column whose values cannot take the unified type.
    """
    pa = _pyarrow()
    columns = []
    for field in schema:
        if field.name in table.column_names:
            column = table[field.name]
            if column.type != field.type:
                try:
                    column = column.cast(field.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise InputError(f"column {field.name!r}: expected {field.type}: {exc}") from None
            columns.append(column)
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def rows_of_tasks(table: Any, tasks: Sequence[str | None]) -> Any:
    """The rows of ``tasks``: a slice when they are consecutive (an input clustered by task),
    which copies nothing, else those rows taken."""
    import pyarrow.compute as pc

    kind = table["task_id"].type
    kept = text_array(tasks).cast(kind.value_type if _pyarrow().types.is_dictionary(kind) else kind)
    chosen = np.flatnonzero(to_numpy(pc.is_in(table["task_id"], value_set=kept, skip_nulls=False)))
    if len(chosen) and chosen[-1] - chosen[0] + 1 == len(chosen):
        return table.slice(int(chosen[0]), len(chosen))
    return table.take(from_numpy(chosen))


def by_file(pieces: Sequence[Piece]) -> Iterator[tuple[int, list[Piece]]]:
    """Runs of consecutive pieces of one file."""
    run: list[Piece] = []
    for piece in pieces:
        if run and piece.file != run[0].file:
            yield run[0].file, run
            run = []
        run.append(piece)
    if run:
        yield run[0].file, run


def _check_text(name: str, table: Any) -> None:
    """Refuse strings that are not UTF-8 here, not where they are met later: each column that
    holds text (in a list or a dictionary too) checked whole; numbers have nothing to check."""
    try:
        for column in table.columns:
            if _holds_text(column.type):
                column.validate(full=True)
    except Exception as exc:
        raise InputError(f"{name}: not a readable Parquet file: {exc}") from None


def _holds_text(kind: Any) -> bool:
    """Whether values of an Arrow type hold strings anywhere (nested, or as a dictionary)."""
    pa = _pyarrow()
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        return True
    if pa.types.is_dictionary(kind):
        return _holds_text(kind.value_type)
    return any(_holds_text(kind.field(i).type) for i in range(kind.num_fields))


def _pyarrow() -> Any:
    pa = arrow()
    if pa is None:
        raise InputError("reading Parquet needs pyarrow: pip install 'arena-core[arrow]'")
    return pa
