"""The checks a streamed input passes as a whole, though its partitions are scored apart
(:mod:`arena_core.streaming`): every run's task among the tasks given, every id used once, the
first bad records reported in input order, an error located at its run's file and record."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from arena_core.io.arrays import to_numpy
from arena_core.io.ids import id_hashes
from arena_core.io.pieces import ROW, Source
from arena_core.io.planning import TaskCounts
from arena_core.io.readers import Problems, used_twice
from arena_core.model.errors import ValidationError
from arena_core.model.records import Task

__all__ = ["check_ids", "check_tasks", "located", "raise_problems"]


def located(source: Source, rows: np.ndarray, ids: Sequence[str], error: ValidationError) -> str:
    """The error, after ``FILE: record N: `` of the run it names when it names one."""
    kind, _, name = error.record.partition(" ")
    if kind == "submission":
        for index, ident in enumerate(ids):
            if repr(ident) == name:
                return f"{source.where(int(rows[index]))}: {error}"
    return str(error)


def raise_problems(problems: list[tuple[int, str]], count: int) -> None:
    """The first problems (in input order) and how many there were, as the whole read reports them."""
    found = Problems()
    for _, message in problems:
        found.add(message)
    found.count = count
    found.raise_if_any()


def check_tasks(source: Source, counts: TaskCounts, tasks: Mapping[str, Task]) -> None:
    """Every run's task among the tasks given, or the error scoring the whole input raises, for its
    first run that names another (a worker knows its own partition's tasks only).

    :raises ValidationError: naming that run and every task given.
    """
    for piece, found in zip(source.pieces, counts.groups, strict=True):
        if all(t is not None and t in tasks for t in found):
            continue
        table = source.read([piece], ["id", "task_id"])
        for ident, task in zip(table["id"].to_pylist(), table["task_id"].to_pylist(), strict=True):
            if task is None or task not in tasks:
                known = ", ".join(sorted(tasks)) or "none"
                raise ValidationError(
                    f"submission {str(ident)!r}", "task_id", f"one of the given tasks ({known})", task
                )


def check_ids(source: Source, hashes: np.ndarray) -> None:
    """Every id used once: equal hashes are read again and compared as text (the error path only).
    ``hashes`` is sorted in place.

    :raises InputError: each id used again, where, and where it was first used.
    """
    ordered = hashes
    ordered.sort()  # in place: a copy's fresh pages would cost as much again as the sort
    candidates = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    if not len(candidates):
        return
    first: dict[str, int] = {}
    repeats: list[tuple[int, str]] = []
    for piece in source.pieces:
        table = source.read([piece], ["id"])
        chosen = np.flatnonzero(np.isin(id_hashes(table["id"]), candidates))
        row_numbers = to_numpy(table[ROW])[chosen]
        for row, ident in zip(row_numbers.tolist(), table["id"].take(chosen).to_pylist(), strict=True):
            if ident in first:
                repeats.append((row, used_twice(source.where(row), ident, source.where(first[ident]))))
            else:
                first[ident] = row
    if repeats:
        raise_problems(repeats, len(repeats))
