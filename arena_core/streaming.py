"""Runs larger than memory, scored a partition of whole tasks at a time: ``arena leaderboard``
and ``arena score`` on Parquet inputs of more than ``partition_rows`` runs.

A task's baseline, scores, ranks and percentiles depend only on its own runs, and a
leaderboard needs only, per group and task, the number of runs and the sums of their scores
(a :class:`~arena_core.stats.tasktable.TaskTable`). So the input is cut into partitions of whole
tasks of at most ``partition_rows`` runs (a task larger than that is a partition of its own),
and each is read, checked and scored by ``evaluate_many`` in a worker process (or on the Dask
cluster of ``check_executor = "dask"``), which hands back its cells and writes its evaluations
to a shard. Nothing holds every run at once: a worker holds its partition, the caller the cells
and eight bytes per run (a hash of its id, to find an id used twice anywhere).

How the input is cut (:func:`plan`): the ``task_id`` column of every row group is read first.
Tasks are gathered in the order they appear into partitions, and a partition reads the row
groups its tasks span, keeping its own tasks' rows: an input sorted or clustered by task (as
hive partitions by task and most writers leave it) is read about once. When tasks are spread
over the row groups so that this would read the input more than twice, every row is first
spilled to its partition's temporary Arrow file instead (:mod:`arena_core.io.spill`).

What equals the in-memory path: every evaluation; the cells, hence the leaderboard (a cell's
runs are all in one partition, in input order, summed in the same order); the bad records
reported, the first ones in input order, with the same messages.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import numpy as np
from attrs import frozen

from arena_core.arena import Arena, worker_arena
from arena_core.engine.records import columns_from_records
from arena_core.engine.tables import columns_from_table
from arena_core.io.arrays import to_numpy
from arena_core.io.decoding import InputError
from arena_core.io.ids import id_hashes
from arena_core.io.pieces import ROW, Piece, Source, by_file, rows_of_tasks
from arena_core.io.readers import MAX_REPORTED, Problems, used_twice
from arena_core.io.spill import read_spilled, spill
from arena_core.model.errors import ArenaError, ValidationError
from arena_core.model.records import Task
from arena_core.stats.runs import runs_of
from arena_core.stats.tasktable import TaskTable

__all__ = ["Part", "Streamed", "plan", "stream"]


@frozen
class Part:
    """One partition: consecutive row groups of the input, or a spill file."""

    rows: int
    tasks: tuple[str | None, ...]
    pieces: tuple[Piece, ...] = ()
    filtered: bool = False
    """Its row groups hold other partitions' tasks too: only its tasks' rows are kept."""
    spilled: str | None = None


@frozen
class Streamed:
    """What streaming an input gave: the runs' cells (when a grouping was asked for), the number
    of runs, and the shards of evaluations written (in partition order)."""

    table: TaskTable | None
    runs: int
    shards: list[Path]
    partitions: int


def plan(
    source: Source, counts: Sequence[Mapping[str | None, int]], limit: int
) -> tuple[list[Part], dict[str | None, int] | None]:
    """The partitions of whole tasks, of at most ``limit`` runs unless one task has more; and,
    when the tasks are spread over the row groups, the partition of each task (the rows are
    then spilled).

    Tasks are taken in the order they first appear and gathered until the next would pass
    ``limit``; a partition reads the row groups its tasks span, keeping its tasks' rows (a row
    group at a cut is read by both sides). When that would read the input more than twice over
    (tasks in no order), the rows are dealt to partitions instead.

    :param counts: per row group, its runs per task.
    """
    first: dict[str | None, int] = {}
    last: dict[str | None, int] = {}
    rows_of: dict[str | None, int] = {}
    for index, found in enumerate(counts):
        for task, n in found.items():
            first.setdefault(task, index)
            last[task] = index
            rows_of[task] = rows_of.get(task, 0) + n
    groups: list[list[str | None]] = []
    load = 0
    for task in first:  # in order of first appearance
        if groups and load + rows_of[task] <= limit:
            groups[-1].append(task)
            load += rows_of[task]
        else:
            groups.append([task])
            load = rows_of[task]
    parts = []
    for tasks in groups:
        span = range(min(first[t] for t in tasks), max(last[t] for t in tasks) + 1)
        rows = sum(rows_of[t] for t in tasks)
        read = sum(source.pieces[i].rows for i in span)
        parts.append(Part(rows, tuple(tasks), tuple(source.pieces[i] for i in span), filtered=read > rows))
    if sum(sum(p.rows for p in part.pieces) for part in parts) <= 2 * source.rows:
        return parts, None
    bins: list[list[str | None]] = [[] for _ in range(max(1, -(-source.rows // limit)))]
    loads = [0] * len(bins)
    for task, n in sorted(rows_of.items(), key=lambda item: -item[1]):
        k = loads.index(min(loads))
        bins[k].append(task)
        loads[k] += n
    partition_of = {t: k for k, tasks in enumerate(bins) for t in tasks}
    return [Part(loads[k], tuple(bins[k])) for k in range(len(bins)) if loads[k]], partition_of


def task_counts(source: Source) -> list[dict[str | None, int]]:
    """Per row group, its runs per task (``None``: runs without a task): each file's ``task_id``
    column read once, coded as its dictionary pages hold it, and each row group's codes counted."""
    if "task_id" not in source.schema.names:
        return [{None: piece.rows} for piece in source.pieces]
    out: list[dict[str | None, int]] = []
    for _, run in by_file(source.pieces):
        codes, names = source.coded(run, "task_id")
        start = 0
        for piece in run:
            counted = np.bincount(codes[start : start + piece.rows], minlength=len(names))
            out.append({names[k]: int(counted[k]) for k in np.flatnonzero(counted).tolist()})
            start += piece.rows
    return out


def stream(
    arena: Arena,
    source: Source,
    tasks: Mapping[str, Task],
    *,
    by: str | None,
    stamp: str,
    shards: tuple[Path, str] | None = None,
    partition_by: Sequence[str] = (),
    on_shard: Callable[[Path], None] | None = None,
    limit: int,
) -> Streamed:
    """Score ``source`` a partition at a time: its cells grouped ``by`` (``None``: none), and
    with ``shards`` (a folder, and ``parquet`` or ``jsonl``) each partition's evaluations
    written to a file there (Parquet: in ``KEY=VALUE`` folders of ``partition_by``'s columns,
    when given; ``arrow``: an Arrow file, for a caller that puts them together), each handed to
    ``on_shard`` as soon as it and every partition before it are scored without a fault.

    :raises InputError: bad records (the first :data:`~arena_core.io.readers.MAX_REPORTED` in
        input order, with a count), or an id used twice.
    :raises ValidationError: a run whose task is not among ``tasks``, as scoring the whole input says.
    :raises ArenaError: an error while scoring, naming the run's file and record.
    """
    if arena.recipe is None:
        raise ArenaError("an Arena with plugins registered by hand cannot score on workers: use evaluate_many")
    executor = _workers(arena) if source.rows > limit else None  # started while the input is planned
    try:
        counts = task_counts(source)
        parts, partition_of = plan(source, counts, limit)
        with tempfile.TemporaryDirectory(prefix="arena-stream-") as scratch:
            if partition_of is not None:
                files = spill(source, partition_of, max(partition_of.values()) + 1, Path(scratch))
                parts = [Part(p.rows, p.tasks, spilled=str(files[partition_of[p.tasks[0]]])) for p in parts]
            jobs = [
                _Job(
                    source,
                    part,
                    {t: tasks[t] for t in part.tasks if t is not None and t in tasks},
                    by,
                    stamp,
                    None if shards is None else str(shards[0] / f"part-{k:05d}.{shards[1]}"),
                    tuple(partition_by),
                )
                for k, part in enumerate(parts)
            ]
            if executor is None or len(jobs) == 1:
                done: Iterator[_Outcome] = (_score(arena, job) for job in jobs)
            else:
                futures = [executor.submit(_score_on_worker, arena.recipe, job) for job in jobs]
                done = (future.result() for future in futures)
            outcomes = []
            for job, outcome in zip(jobs, done, strict=True):  # in partition order, as each is done
                outcomes.append(outcome)
                whole = all(o.count == 0 and o.error is None for o in outcomes)
                if on_shard is not None and job.shard is not None and outcome.runs and whole:
                    on_shard(Path(job.shard))
    finally:
        if executor is not None:
            executor.shutdown(cancel_futures=True)
    problems = sorted(p for o in outcomes for p in o.problems)
    count = sum(o.count for o in outcomes)
    if count:
        _raise(problems, count)
    _check_ids(source, np.concatenate([o.hashes for o in outcomes]) if outcomes else np.zeros(0, np.uint64))
    _check_tasks(source, counts, tasks)
    errors = [o.error for o in outcomes if o.error]
    if errors:
        raise ArenaError(errors[0])
    runs = sum(o.runs for o in outcomes)
    if runs == 0:
        raise InputError(f"{source.names[0]}: no submissions in the file")
    tables = [o.cells for o in outcomes if o.cells is not None]
    return Streamed(
        TaskTable.joined(tables) if by is not None else None,
        runs,
        [Path(j.shard) for j in jobs if j.shard is not None],
        len(parts),
    )


def _workers(arena: Arena) -> Executor:
    """The configured executor's workers, or processes of this machine (one per core) when that
    one runs in this process: threads cannot score in parallel (the engine's Python between
    NumPy calls holds the interpreter's lock). Each starts building its Arena at once."""
    executors = arena.components.check_executors
    local = getattr(executors[arena.config.check_executor], "local", True)
    name = "processes" if local else arena.config.check_executor
    workers = (os.cpu_count() or 1) if local else arena.config.check_concurrency
    executor: Executor = executors[name].start(workers)
    for _ in range(workers):
        executor.submit(worker_arena, *arena.recipe)  # type: ignore[misc]  # checked by the caller
    return executor


@frozen
class _Job:
    source: Source
    part: Part
    tasks: dict[str, Task]
    by: str | None
    stamp: str
    shard: str | None
    partition_by: tuple[str, ...] = ()


@frozen
class _Outcome:
    runs: int
    hashes: np.ndarray
    problems: list[tuple[int, str]]
    count: int
    cells: TaskTable | None = None
    error: str | None = None


def _score_on_worker(recipe: tuple[Any, ...], job: _Job) -> _Outcome:
    return _score(worker_arena(*recipe), job)


def _score(arena: Arena, job: _Job) -> _Outcome:
    """One partition: read, checked as the in-memory reader checks, scored; its cells and shard."""
    source = job.source
    table = read_spilled(Path(job.part.spilled)) if job.part.spilled else source.read(job.part.pieces)
    if job.part.filtered:
        table = rows_of_tasks(table, job.part.tasks)
    rows = to_numpy(table[ROW])
    table = table.drop_columns([ROW])
    hashes = id_hashes(table["id"]) if "id" in table.column_names else np.zeros(len(rows), np.uint64)
    strict = arena.config.strict
    columns = columns_from_table(table, strict=strict)
    problems: list[tuple[int, str]] = []
    if columns is None:
        records = [{k: v for k, v in row.items() if v is not None} for row in table.to_pylist()]

        def invalid(index: int, error: ValidationError) -> None:
            problems.append((int(rows[index]), f"{source.where(int(rows[index]))}: {error}"))

        columns = columns_from_records(records, arena.structure_submission, strict=strict, on_invalid=invalid)
        if columns is None:
            raise InputError(f"{source.names[0]}: runs with workspaces are scored in memory, not streamed")
    if problems or not len(rows):
        return _Outcome(0, hashes, sorted(problems)[:MAX_REPORTED], len(problems))
    try:  # ids used twice, here or across partitions, are found by their hashes, afterwards
        result = arena.evaluate_many(columns.ids_checked(), job.tasks, evaluated_at=job.stamp)
    except ValidationError as error:
        return _Outcome(0, hashes, [], 0, error=_located(source, rows, columns.ids, error))
    cells = None
    if job.by is not None:
        meta = _unknown_models_meta(table) if "model" in job.by else None
        cells = TaskTable.of(runs_of(arena.scorer, result, job.by, meta)).cells_only()
    if job.shard is not None:
        _write_shard(result, job.shard, job.partition_by)
    return _Outcome(len(rows), hashes, [], 0, cells)


def _unknown_models_meta(table: Any) -> dict[str, Any] | None:
    """The meta of the runs whose model is unknown (they are grouped by the harness run it names)."""
    import pyarrow.compute as pc

    if "meta" not in table.column_names or "model" not in table.column_names:
        return None
    unknown = table.filter(pc.is_null(table["model"])).select(["id", "meta"]).to_pylist()
    return {row["id"]: {k: v for k, v in (row["meta"] or {}).items() if v is not None} for row in unknown}


def _write_shard(result: Any, path: str, partition_by: tuple[str, ...]) -> None:
    """A partition's evaluations as one file, or as a hive dataset by ``partition_by`` (the
    file's name, numbered, in each ``KEY=VALUE`` folder)."""
    if path.endswith(".arrow"):
        import pyarrow as pa
        import pyarrow.ipc

        table = result.to_arrow()
        with pa.OSFile(path, "wb") as sink, pyarrow.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        return
    if path.endswith(".parquet") and partition_by:
        import pyarrow.dataset as ds

        where = Path(path)
        ds.write_dataset(result.to_arrow(), where.parent, format="parquet", partitioning=list(partition_by),
                         partitioning_flavor="hive", basename_template=f"{where.stem}-{{i}}.parquet",
                         existing_data_behavior="overwrite_or_ignore")  # fmt: skip
        return
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        pq.write_table(result.to_arrow(), path)
        return
    with open(path, "wb") as out:
        for block in result.json_lines():
            out.write(block)


def _located(source: Source, rows: np.ndarray, ids: Sequence[str], error: ValidationError) -> str:
    """The error, after ``FILE: record N: `` of the run it names when it names one."""
    kind, _, name = error.record.partition(" ")
    if kind == "submission":
        for index, ident in enumerate(ids):
            if repr(ident) == name:
                return f"{source.where(int(rows[index]))}: {error}"
    return str(error)


def _raise(problems: list[tuple[int, str]], count: int) -> None:
    """The first problems (in input order) and how many there were, as the whole read reports them."""
    found = Problems()
    for _, message in problems:
        found.add(message)
    found.count = count
    found.raise_if_any()


def _check_tasks(source: Source, counts: Sequence[Mapping[str | None, int]], tasks: Mapping[str, Task]) -> None:
    """Every run's task among the tasks given, or the error scoring the whole input raises, for its
    first run that names another (a worker knows its own partition's tasks only).

    :raises ValidationError: naming that run and every task given.
    """
    for piece, found in zip(source.pieces, counts, strict=True):
        if all(t is not None and t in tasks for t in found):
            continue
        table = source.read([piece], ["id", "task_id"])
        for ident, task in zip(table["id"].to_pylist(), table["task_id"].to_pylist(), strict=True):
            if task is None or task not in tasks:
                known = ", ".join(sorted(tasks)) or "none"
                raise ValidationError(
                    f"submission {str(ident)!r}", "task_id", f"one of the given tasks ({known})", task
                )


def _check_ids(source: Source, hashes: np.ndarray) -> None:
    """Every id used once: equal hashes are read again and compared as text (the error path only).

    :raises InputError: each id used again, where, and where it was first used.
    """
    ordered = np.sort(hashes)
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
        _raise(repeats, len(repeats))
