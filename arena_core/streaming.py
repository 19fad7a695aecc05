"""Runs larger than memory, scored a partition of whole tasks at a time: ``arena leaderboard``
and ``arena score`` on Parquet inputs of more than ``partition_rows`` runs.

A task's baseline, scores, ranks and percentiles depend only on its own runs, and a
leaderboard needs only, per group and task, the number of runs and the sums of their scores
(a :class:`~arena_core.stats.tasktable.TaskTable`). So the input is cut into partitions of whole
tasks of at most ``partition_rows`` runs (a task larger than that is a partition of its own),
and each is read, checked and scored by ``evaluate_many`` in this process or a worker process
(one per other core; on the Dask cluster of ``check_executor = "dask"``, there only), which
hands back its cells and its evaluations (written to a shard, or as a table for the caller to
append). Nothing holds every run at once: each process holds the partition it scores, the
caller the cells and eight bytes per run (a hash of its id, to find an id used twice anywhere).

How the input is cut (:func:`arena_core.io.planning.plan`): the ``task_id`` column of every row
group is read first. Tasks are cut in the order they appear into partitions of about equal
size, as many as a multiple of the processes scoring them, and a partition reads the row groups
its tasks span, keeping its own tasks' rows: an input sorted or clustered by task (as
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
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs
import numpy as np
from attrs import frozen

from arena_core.arena import Arena, worker_arena
from arena_core.engine.cores import usable_cores as _cores
from arena_core.engine.fingerprints import task_run_digests
from arena_core.engine.records import columns_from_records
from arena_core.engine.tables import CODED_TEXT, columns_from_table
from arena_core.io.arrays import to_numpy
from arena_core.io.decoding import InputError
from arena_core.io.ids import id_hashes
from arena_core.io.pieces import ROW, Source, rows_of_tasks
from arena_core.io.planning import Part, plan, task_counts
from arena_core.io.readers import MAX_REPORTED
from arena_core.io.spill import read_spilled, spill, write_spilled
from arena_core.io.streamchecks import check_ids, check_tasks, located, raise_problems
from arena_core.io.tables import records_of_table
from arena_core.io.writers import write_shard
from arena_core.model.errors import ArenaError, ValidationError
from arena_core.model.records import Task
from arena_core.stats.celltable import CellTable, is_sparse
from arena_core.stats.room import BoardTooLarge
from arena_core.stats.runs import runs_of
from arena_core.stats.tasktable import TaskTable

__all__ = ["Streamed", "stream"]


@frozen
class Streamed:
    """What streaming an input gave: the runs' cells (when a grouping was asked for), the number
    of runs, and the shards of evaluations written (in partition order)."""

    table: TaskTable | CellTable | None
    """The cells: a dense table, or with ``cells`` one too large for it as its cells that hold runs."""
    runs: int
    shards: list[Path]
    partitions: int
    digests: dict[str, str]
    """Each task's digest of its runs, when asked for."""


def stream(
    arena: Arena,
    source: Source,
    tasks: Mapping[str, Task],
    *,
    by: str | None,
    stamp: str,
    shards: tuple[Path, str] | None = None,
    partition_by: Sequence[str] = (),
    on_table: Callable[[Any], None] | None = None,
    limit: int,
    started: Callable[[], None] | None = None,
    digests: bool = False,
    cells: bool = False,
) -> Streamed:
    """Score ``source`` a partition at a time: its cells grouped ``by`` (``None``: none); with
    ``shards`` (a folder, and ``parquet`` or ``jsonl``) each partition's evaluations written to
    a file there (Parquet: in ``KEY=VALUE`` folders of ``partition_by``'s columns, when given);
    with ``on_table``, each partition's evaluations handed to it as an Arrow table, in partition
    order, as soon as it and every partition before it are scored without a fault (a worker on
    this machine hands them over in a temporary Arrow file, removed once handed on; a Dask worker
    with its outcome, so no shared file system is needed). ``started`` is called once the
    workers are started and the input planned: a thread the caller starts then does not keep
    them from being forked, nor slow the planning. With ``digests``, each task's digest of its
    runs (:func:`~arena_core.engine.fingerprints.task_run_digests`), for a board's provenance.
    With ``cells`` (the board's method scores a board from its cells), a board too large for its
    dense table is given as a :class:`~arena_core.stats.celltable.CellTable`.

    :raises InputError: bad records (the first :data:`~arena_core.io.readers.MAX_REPORTED` in
        input order, with a count), or an id used twice.
    :raises ValidationError: a run whose task is not among ``tasks``, as scoring the whole input says.
    :raises ArenaError: an error while scoring, naming the run's file and record.
    """
    if arena.recipe is None:
        raise ArenaError("an Arena with plugins registered by hand cannot score on workers: use evaluate_many")
    lanes = _lanes(arena) if source.rows > limit else _Lanes(None, 0, True)
    try:
        counts = task_counts(source)
        parts, partition_of = plan(source, counts, limit, lanes.count + lanes.local)
        if started is not None:
            started()
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
                    on_table is not None,
                    f"{scratch}/table-{k:05d}.arrow" if on_table is not None and lanes.local else None,
                    digests,
                    cells,
                )
                for k, part in enumerate(parts)
            ]
            outcomes: list[_Outcome] = []
            whole = True  # no partition so far has a bad record or an error
            for outcome in _outcomes(arena, lanes, jobs):  # in partition order, as each is done
                outcomes.append(attrs.evolve(outcome, table=None))  # the table is not held on to
                whole = whole and outcome.count == 0 and outcome.error is None
                if on_table is not None and outcome.table is not None and whole:
                    on_table(read_spilled(Path(outcome.table)) if isinstance(outcome.table, str) else outcome.table)
                if isinstance(outcome.table, str):
                    os.unlink(outcome.table)
    finally:
        if lanes.workers is not None:
            lanes.workers.shutdown(cancel_futures=True)
    problems = sorted(p for o in outcomes for p in o.problems)
    count = sum(o.count for o in outcomes)
    if count:
        raise_problems(problems, count)
    check_ids(source, np.concatenate([o.hashes for o in outcomes]) if outcomes else np.zeros(0, np.uint64))
    check_tasks(source, counts, tasks)
    errors = [o.error for o in outcomes if o.error]
    if errors:
        raise ArenaError(errors[0])
    runs = sum(o.runs for o in outcomes)
    if runs == 0:
        raise InputError(f"{source.names[0]}: no submissions in the file")
    tables = [o.cells for o in outcomes if o.cells is not None]
    return Streamed(
        _joined(tables, cells) if by is not None else None,
        runs,
        [Path(j.shard) for j in jobs if j.shard is not None],
        len(parts),
        {t: d for o in outcomes for t, d in o.digests.items()},
    )


@frozen
class _Lanes:
    """What scores the partitions: ``count`` workers; when they are ``local`` (on this machine),
    this process too, and they hand their tables over in files rather than with their outcomes."""

    workers: Executor | None
    count: int
    local: bool


def _lanes(arena: Arena) -> _Lanes:
    """On this machine, processes for every core but the one this process scores on (threads
    cannot score in parallel: the engine's Python between NumPy calls holds the interpreter's
    lock); else the configured executor's workers (a Dask cluster's), this process only handing
    them out. Each worker starts building its Arena at once, while the input is planned."""
    executors = arena.components.check_executors
    local = getattr(executors[arena.config.check_executor], "local", True)
    name = "processes" if local else arena.config.check_executor
    count = _cores() - 1 if local else arena.config.check_concurrency
    if count < 1:
        return _Lanes(None, 0, True)
    if local:
        worker_arena(*arena.recipe or (), built=arena)  # shared with workers forked from this process
    executor: Executor = executors[name].start(count)
    for _ in range(count):
        executor.submit(worker_arena, *arena.recipe)  # type: ignore[misc]  # checked by the caller
    return _Lanes(executor, count, local)


def _outcomes(arena: Arena, lanes: _Lanes, jobs: Sequence[_Job]) -> Iterator[_Outcome]:
    """Each job's outcome, in partition order. Every lane takes the next job as soon as it is
    free, so none idles while another has jobs waiting: a lane hands its job to a worker, unless
    this process is free to score it (its Arena is built already)."""
    workers = lanes.workers
    if workers is None or len(jobs) == 1:
        yield from (_score(arena, job) for job in jobs)
        return
    own = threading.Lock() if lanes.local else None
    recipe = arena.recipe
    assert recipe is not None  # checked by the caller

    def lane(job: _Job) -> _Outcome:
        if own is not None and own.acquire(blocking=False):
            try:
                return _score(arena, job)
            finally:
                own.release()
        outcome: _Outcome = workers.submit(_score_on_worker, recipe, job).result()
        return outcome

    count = lanes.count + lanes.local
    pool = ThreadPoolExecutor(max_workers=count, thread_name_prefix="arena-lane")
    pending: deque[Future[_Outcome]] = deque()
    handed = 0
    try:
        for done in range(len(jobs)):
            # Jobs are handed out at most 2 lanes' worth ahead of the one the caller waits for:
            # outcomes done out of order (and their tables) wait for it in bounded number.
            while handed < len(jobs) and handed < done + 2 * count:
                pending.append(pool.submit(lane, jobs[handed]))
                handed += 1
            yield pending.popleft().result()
    finally:
        pool.shutdown(cancel_futures=True)


@frozen
class _Job:
    source: Source
    part: Part
    tasks: dict[str, Task]
    by: str | None
    stamp: str
    shard: str | None
    partition_by: tuple[str, ...] = ()
    arrow: bool = False
    """Whether the evaluations come back as an Arrow table."""
    handoff: str | None = None
    """Where a worker on this machine writes that table, as an Arrow file, for the caller to map
    (a worker elsewhere sends it back with its outcome)."""
    digests: bool = False
    cells: bool = False
    """Whether a partition too large for its dense table is handed back as its cells."""


@frozen
class _Outcome:
    runs: int
    hashes: np.ndarray
    problems: list[tuple[int, str]]
    count: int
    cells: TaskTable | CellTable | None = None
    error: str | None = None
    table: Any = None
    """The evaluations as an Arrow table, or the path of the Arrow file that holds them."""
    digests: dict[str, str] = attrs.field(factory=dict)


def _score_on_worker(recipe: tuple[Any, ...], job: _Job) -> _Outcome:
    outcome = _score(worker_arena(*recipe), job)
    if outcome.table is None or job.handoff is None:
        return outcome
    write_spilled(outcome.table, job.handoff)
    return attrs.evolve(outcome, table=job.handoff)


def _score(arena: Arena, job: _Job) -> _Outcome:
    """One partition: read, checked as the in-memory reader checks, scored; its cells and shard."""
    source = job.source
    part = job.part
    table = (
        read_spilled(Path(part.spilled)) if part.spilled else source.read(part.pieces, coded=CODED_TEXT, head=part.head)
    )
    if part.filtered:
        table = rows_of_tasks(table, part.tasks)
    elif part.skip or table.num_rows > part.rows:
        table = table.slice(part.skip, part.rows)  # a stretch of the input: its rows by position
    rows = to_numpy(table[ROW])
    table = table.drop_columns([ROW])
    hashes = id_hashes(table["id"]) if "id" in table.column_names else np.zeros(len(rows), np.uint64)
    strict = arena.config.strict
    columns = columns_from_table(table, strict=strict)
    problems: list[tuple[int, str]] = []
    if columns is None:
        records = records_of_table(table)

        def invalid(index: int, error: ValidationError) -> None:
            problems.append((int(rows[index]), f"{source.where(int(rows[index]))}: {error}"))

        columns = columns_from_records(records, arena.structure_submission, strict=strict, on_invalid=invalid)
        if columns is None:
            raise InputError(f"{source.names[0]}: runs with workspaces are scored in memory, not streamed")
    if problems or not len(rows):
        return _Outcome(0, hashes, sorted(problems)[:MAX_REPORTED], len(problems))
    try:  # ids used twice, here or across partitions, are found by their hashes, afterwards
        result: Any = arena.evaluate_many(columns.ids_checked(), job.tasks, evaluated_at=job.stamp)  # a batch
    except ValidationError as error:
        return _Outcome(0, hashes, [], 0, error=located(source, rows, columns.ids, error))
    cells: TaskTable | CellTable | None = None
    if job.by is not None:
        meta = _unknown_models_meta(table) if "model" in job.by else None
        runs = runs_of(arena.scorer, result, job.by, meta)
        try:
            cells = TaskTable.of(runs, cells_only=True)
        except BoardTooLarge:
            if not job.cells:
                raise
            cells = CellTable.of(runs)
    if job.shard is not None:
        write_shard(result, job.shard, job.partition_by)
    digests = task_run_digests(columns) if job.digests else {}
    return _Outcome(len(rows), hashes, [], 0, cells, table=result.to_arrow() if job.arrow else None, digests=digests)


def _joined(tables: list[TaskTable | CellTable], cells: bool) -> TaskTable | CellTable:
    """The partitions' tables joined: dense, or with ``cells`` as the cells that hold runs when
    the board is sparse (:func:`~arena_core.stats.celltable.is_sparse`) or a partition's or the whole board's dense
    table does not fit."""
    dense = [t for t in tables if isinstance(t, TaskTable)]
    size = len(set().union(*(t.groups for t in tables))) * sum(len(t.tasks) for t in tables)
    held = sum(int(t.present.sum()) for t in dense) + sum(len(t.group) for t in tables if isinstance(t, CellTable))
    if cells and is_sparse(size, held):
        return CellTable.joined(tables)
    if len(dense) == len(tables):
        try:
            return TaskTable.joined(dense)
        except BoardTooLarge:
            if not cells:
                raise
    return CellTable.joined(tables)


def _unknown_models_meta(table: Any) -> dict[str, Any] | None:
    """The meta of the runs whose model is unknown (they are grouped by the harness run it names)."""
    import pyarrow.compute as pc

    if "meta" not in table.column_names or "model" not in table.column_names:
        return None
    unknown = table.filter(pc.is_null(table["model"])).select(["id", "meta"]).to_pylist()
    return {row["id"]: {k: v for k, v in (row["meta"] or {}).items() if v is not None} for row in unknown}
