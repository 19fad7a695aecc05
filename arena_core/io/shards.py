"""Submissions split over many files: several files, a glob of them (``'runs/*.parquet'``), or a
folder of them (searched through, so a hive-partitioned dataset such as
``runs/task_id=fix-parser/part-0.parquet`` is read whole).

The shards are one input: their records in file order (files sorted by path), each named by
its own ``FILE:LINE`` in messages. A ``key=value`` folder between the folder given and a file
gives every record of that file ``key`` (unless the record has it): hive partitioning keeps
those columns out of the files themselves. Partition values are text, so partition by names
(``task_id``, ``tool``, ``model``), not by figures.
"""

from __future__ import annotations

import glob
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Any, TypeVar

from arena_core.io.arrays import repeated
from arena_core.io.decoding import InputError
from arena_core.io.readers import Located, read_records
from arena_core.io.tables import arrow, read_table

__all__ = [
    "SHARD_SUFFIXES", "glob_root", "hidden", "matched_with_roots", "matching", "read_shard_records", "read_shard_table",
    "shard_files",
]  # fmt: skip

_P = TypeVar("_P", bound=PurePath)

#: What a folder's shards may be: one kind of file throughout.
SHARD_SUFFIXES = (".parquet", ".jsonl", ".ndjson", ".json", ".csv")


def hidden(path: PurePath, root: PurePath) -> bool:
    """A file Spark, Hive or an editor left beside the data (``_SUCCESS``, ``.crc``), below ``root``
    (a local folder, or a bucket's prefix)."""
    return any(part.startswith((".", "_")) for part in path.relative_to(root).parts)


def shard_files(paths: Sequence[Path]) -> list[tuple[Path, Path]] | None:
    """(file, the folder given that holds it) of each shard, in path order; ``None`` for one
    plain file (not a shard set).

    :raises InputError: a folder without shards, a shard in it that is a link, or shards of
        different kinds.
    """
    matched = matched_with_roots(paths)
    if len(matched) == 1 and matched[0][1] is None and not matched[0][0].is_dir():
        return None
    found: list[tuple[Path, Path]] = []
    for given, root in matched:
        if root is not None and (given.is_symlink() or not given.resolve().is_relative_to(root.resolve())):
            raise InputError(f"{given}: a link; the files a glob matches are read as regular files below it")
        if not given.is_dir():
            found.append((given, root or given.parent))
            continue
        inside = sorted(f for f in given.rglob("*") if f.is_file() and not hidden(f, given))
        shards = [f for f in inside if f.suffix.lower() in SHARD_SUFFIXES]
        real = given.resolve()
        for shard in shards:  # a link would read what the folder's writer points it at: a host file
            if shard.is_symlink() or not shard.resolve().is_relative_to(real):
                raise InputError(f"{shard}: a link; a folder's shards are read as regular files inside it")
        if not shards:
            raise InputError(f"{given}: no {', '.join(SHARD_SUFFIXES)} files in the folder")
        found += [(f, given) for f in shards]
    kinds = {_kind(f) for f, _ in found}
    if len(kinds) > 1:
        raise InputError(f"{matched[0][0]}: shards of one kind expected, found {', '.join(sorted(kinds))} files")
    return found


def matching(paths: Sequence[Path]) -> list[Path]:
    """The paths, each quoted glob (``'runs/*.parquet'``, ``'runs/**/*.jsonl'``) replaced by the
    files it matches, in path order.

    :raises InputError: a glob that matches nothing.
    """
    return [path for path, _ in matched_with_roots(paths)]


def matched_with_roots(paths: Sequence[Path]) -> list[tuple[Path, Path | None]]:
    """:func:`matching`'s paths, each a file a glob matched with the folder the glob starts from
    (``runs`` for ``'runs/**/*.parquet'``: its ``key=value`` folders below are partition keys), a
    path given as such with ``None``.

    :raises InputError: a glob that matches nothing.
    """
    found: list[tuple[Path, Path | None]] = []
    for given in paths:
        if given.exists() or not any(c in str(given) for c in "*?["):
            found.append((given, None))
            continue
        matched = sorted(Path(p) for p in glob.glob(str(given), recursive=True))
        if not matched:
            raise InputError(f"{given}: no file matches")
        found += [(path, glob_root(given)) for path in matched]
    return found


def glob_root(pattern: _P) -> _P:
    """The folder a glob starts from: its parts before the first that holds a wildcard."""
    parts = pattern.parts
    fixed = next(i for i, part in enumerate(parts) if any(c in part for c in "*?["))
    return type(pattern)(*parts[:fixed]) if fixed else type(pattern)(".")


def _kind(path: Path) -> str:
    suffix = path.suffix.lower()
    return ".jsonl" if suffix == ".ndjson" else suffix


def partition_keys(path: Path, root: Path) -> dict[str, str]:
    """The ``key=value`` folders between ``root`` and ``path``, as a record's fields."""
    keys: dict[str, str] = {}
    for part in path.parent.relative_to(root).parts:
        key, sep, value = part.partition("=")
        if sep and key:
            keys[key] = value
    return keys


def read_shard_records(shards: Sequence[tuple[Path, Path]], *, task_id: str | None = None) -> Located:
    """Every record of every shard, decoded but not validated, each placed ``FILE:LINE``;
    partition keys filled in; every shard's bad lines reported together."""
    combined = Located(shards[0][1])
    combined.places = []
    for path, root in shards:
        part = read_records(path)
        keys = partition_keys(path, root)
        for index, record in enumerate(part.records):
            if keys and isinstance(record, dict):
                record = {**keys, **record}
            if task_id is not None and isinstance(record, dict) and record.get("task_id") != task_id:
                continue
            combined.records.append(record)
            combined.places.append(part.where(index))
        for line in part.problems.lines:
            combined.problems.add(line)
        combined.problems.count += part.problems.count - len(part.problems.lines)
    return combined


def read_shard_table(shards: Sequence[tuple[Path, Path]], *, task_id: str | None = None) -> Any | None:
    """The shards as one Arrow table, partition keys as columns (a Parquet or JSON Lines shard
    set, pyarrow installed, schemas that unify: a column one shard lacks is null there), else
    ``None``: then the records are read shard by shard, and what is wrong is said there."""
    pa = arrow()
    if pa is None or _kind(shards[0][0]) not in (".parquet", ".jsonl"):
        return None
    parts = []
    for path, root in shards:
        table = read_table(path, task_id=task_id)
        if table is None:
            return None
        for key, value in partition_keys(path, root).items():
            if key not in table.column_names:
                table = table.append_column(key, repeated(value, table.num_rows))
        parts.append(table)
    try:
        return pa.concat_tables(parts, promote_options="default")
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None  # a column of different types in different shards: the records say which
