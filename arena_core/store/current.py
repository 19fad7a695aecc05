"""A store's board: every stored run scored against its task's current baseline.

The pipeline scores each batch against the baseline stored before it (the spec's step 2) and
keeps that evaluation as history, so a task's first runs are scored against defaults and a
leaderboard of the stored evaluations depends on the order in which runs arrived. After every
batch the pipeline stores, as each key's current baseline, the one computed from all of the
task's stored runs (step 6). Scoring every stored run against those baselines is therefore
scoring the stored runs as one batch: the board of a store is the board of its runs and tasks
given together, whatever order they came in, and equal to ``arena leaderboard`` of an export.

The criteria's verdicts are not found again: a workspace is not checked twice and a judge not
asked twice; each run's stored verdicts are reused (:func:`stored_verdicts`).

:class:`CurrentScores` keeps each task's current evaluations until the task changes (its
record, or a baseline version of one of its keys): a service that stored one run rescores
that run's task, not the store. A SQL store's runs are read as columns from their stored
records and scored as one batch, each evaluation built only when read and each task's cells
summed from the scores' columns (a million runs in seconds); runs are read as objects only where
scoring needs them (priced costs, a criterion reading a run's meta or slow to check, a workspace).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Hashable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

from arena_core.engine.ahead import checked_ahead, needs_checking, needs_whole_runs, slow_checks, verdict_key
from arena_core.engine.columns import Columns
from arena_core.engine.fingerprints import task_run_digests
from arena_core.engine.records import columns_from_records
from arena_core.engine.results import EvaluationBatch
from arena_core.engine.sequences import BuiltOnAccess
from arena_core.model.records import CriterionResult, Evaluation, Submission, Task
from arena_core.store.cells import CellLedger, batch_cells

if TYPE_CHECKING:
    from arena_core.arena import Arena
    from arena_core.store import Store

__all__ = [
    "GENERATIONS_SQL", "CurrentScores", "current_evaluations", "generations_of_rows", "score_stored", "stored_columns",
    "stored_tasks",
    "stored_verdicts", "verdicts_kept",
]  # fmt: skip

#: The queries a SQL store answers :meth:`task_generations` with: each task's record, and each
#: baseline key's newest version (an index seek a key: flat in the number of stored runs).
GENERATIONS_SQL = (
    "SELECT id, data FROM tasks",
    "SELECT b.key, (SELECT MAX(v.version) FROM baseline_versions v WHERE v.key = b.key) FROM baselines b",
)


def generations_of_rows(tasks: Iterable[Sequence[Any]], versions: Iterable[Sequence[Any]]) -> dict[str, Hashable]:
    """Each task's generation from the rows of :data:`GENERATIONS_SQL`: its record and the
    newest version of each of its baseline keys (a key is the task id, then its group)."""
    keys: dict[str, list[tuple[str, int]]] = {}
    for key, version in versions:
        keys.setdefault(str(key).split("\x1f", 1)[0], []).append((str(key), int(version or 0)))
    return {str(task_id): (data, tuple(sorted(keys.get(str(task_id), ())))) for task_id, data in tasks}


def stored_verdicts(
    evaluations: Iterable[Evaluation], submissions: Iterable[Submission], task: Task
) -> dict[Hashable, tuple[CriterionResult, ...]]:
    """The verdicts each run's stored evaluation holds, to score it with again instead of
    checking it again, where they answer the task's criteria as it is defined now (the same
    types and weights, in order); a run of a redefined task is checked again."""
    wanted = [(c.type, c.weight) for c in task.success_criteria]
    held = {e.submission_id: e.criteria for e in evaluations}
    found: dict[Hashable, tuple[CriterionResult, ...]] = {}
    for submission in submissions:
        criteria = held.get(submission.id)
        if criteria and [(c.type, c.weight) for c in criteria] == wanted:
            found[verdict_key(submission, task)] = criteria
    return found


def stored_tasks(tx: Any, task_ids: Iterable[str] | None = None) -> dict[str, Task]:
    """The stored tasks of ``task_ids`` (every stored task by default), by id, read in ``tx``."""
    wanted = tx.task_ids() if task_ids is None else task_ids
    return {t: task for t in wanted if (task := tx.get_task(t)) is not None}


def current_evaluations(arena: Arena, store: Store, task_ids: Iterable[str] | None = None) -> list[Evaluation]:
    """The stored runs of ``task_ids`` (every task by default) scored together against their
    tasks' current baselines, with their stored verdicts; tasks without runs give nothing."""
    return _read_and_score(arena, store, task_ids)[1]


def score_stored(arena: Arena, store: Store, runs: Sequence[Submission], tasks: Mapping[str, Task]) -> list[Evaluation]:
    """Stored ``runs`` (every stored run of their tasks, read already) scored against their
    tasks' current baselines, with their stored verdicts: :func:`current_evaluations` without
    reading the runs again."""
    if not runs:
        return []
    with checked_ahead(verdicts_kept(arena, store, runs, tasks)):
        return list(arena.evaluate_many(runs, tasks, evaluated_at=datetime.now(UTC).isoformat()))


def _read_and_score(
    arena: Arena, store: Store, task_ids: Iterable[str] | None
) -> tuple[list[Submission], list[Evaluation]]:
    """The stored runs of ``task_ids`` (every task by default) and their current evaluations."""
    with store.transaction(write=False) as tx:
        tasks = stored_tasks(tx, task_ids)
        runs = [s for t in tasks for s in tx.submissions(t)]
    return runs, score_stored(arena, store, runs, tasks)


def verdicts_kept(
    arena: Arena, store: Store, runs: Sequence[Submission], tasks: Mapping[str, Task]
) -> dict[Hashable, tuple[CriterionResult, ...]]:
    """The stored verdicts of those of ``runs`` whose scoring would check a workspace or ask a
    judge (:func:`stored_verdicts`), to score them with inside :func:`checked_ahead`."""
    checked: dict[str, list[Submission]] = {}
    for s in runs:
        task = tasks.get(s.task_id or "")
        if task is not None and needs_checking(arena.scorer, s, task):
            checked.setdefault(task.id, []).append(s)
    found: dict[Hashable, tuple[CriterionResult, ...]] = {}
    if checked:
        with store.transaction(write=False) as tx:
            for task_id, mine in checked.items():
                found.update(stored_verdicts(tx.evaluations(task_id), mine, tasks[task_id]))
    return found


class CurrentScores:
    """A store's current evaluations, kept per task between reads: a task is scored again only
    when its generation (its record, its baselines' versions) moved since it was last scored,
    so a read after a write costs the tasks the write touched. A store without
    ``task_generations()`` (one of the nine methods alone) is scored whole at each read. With
    ``difficulty_source = "irt"`` (a fit over every task), any change rescores all. Safe to share
    between threads."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self._held: dict[str, _Task] = {}
        self._lock = threading.Lock()

    def evaluations(self, store: Store) -> list[Evaluation]:
        """Every stored run's current evaluation, task by task in the store's task order."""
        return self.read(store)[0]

    def read(self, store: Store) -> tuple[list[Evaluation], dict[str, Mapping[str, Any]]]:
        """Every stored run's current evaluation, and each run's meta by its id (what boards
        grouped or chosen by meta read), kept with them so that a board reads no run again."""
        held = self._refreshed(store)
        return [e for entry in held for e in entry.evaluations], {i: m for entry in held for i, m in entry.meta.items()}

    def of_task(self, store: Store, task_id: str) -> list[Evaluation]:
        """The current evaluations of one task's stored runs, in first-stored order."""
        return [e for entry in self._refreshed(store) if entry.task_id == task_id for e in entry.evaluations]

    def cells(self, store: Store, grouping: str) -> list[tuple[object, ...]]:
        """The current evaluations' cells of ``grouping`` (``tool`` or ``model``), as a store's
        ``board_cells`` gives them (:func:`arena_core.store.cells.task_table` reads them): the
        sums of each task kept with its evaluations, so a board reads one row per group and task."""
        return [row for entry in self._refreshed(store) for row in entry.cells(grouping)]

    def run_digests(self, store: Store) -> tuple[dict[str, str], int]:
        """Each task's digest of its stored runs (:func:`~arena_core.engine.fingerprints.task_run_digests`),
        kept with its evaluations, and how many runs there are: the provenance of the store's board."""
        held = [entry for entry in self._refreshed(store) if entry.evaluations]
        return {entry.task_id: entry.digest for entry in held}, sum(len(entry.evaluations) for entry in held)

    def _refreshed(self, store: Store) -> list[_Task]:
        with store.transaction(write=False) as tx:
            generations = tx.task_generations() if hasattr(tx, "task_generations") else None
        if generations is None:
            return list(self._scored(store, None, {}).values())
        with self._lock:
            held = {t: h for t, h in self._held.items() if t in generations}
            stale = [t for t, g in generations.items() if t not in held or held[t].generation != g]
            if stale and self.arena.config.difficulty_source == "irt":
                stale = list(generations)
            if stale:
                held.update(self._scored(store, stale, generations))
            self._held = held
            return [held[t] for t in generations]

    def _scored(
        self, store: Store, task_ids: list[str] | None, generations: Mapping[str, Hashable]
    ) -> dict[str, _Task]:
        """The tasks ``task_ids`` (all by default) read and scored, each at its generation."""
        read = stored_columns(self.arena, store, task_ids)
        if read is not None:
            return _scored_columns(self.arena, *read, generations)
        runs, evaluations = _read_and_score(self.arena, store, task_ids)
        found = {t: _Task(t, generations.get(t)) for t in (task_ids or dict.fromkeys(s.task_id or "" for s in runs))}
        for run in runs:
            found[run.task_id or ""].meta[run.id] = run.meta
        for task_id, digest in task_run_digests(runs).items():
            found[task_id].digest = digest
        by_task: dict[str, list[Evaluation]] = {t: [] for t in found}
        for evaluation in evaluations:
            by_task[evaluation.task_id].append(evaluation)
        for task_id, held in by_task.items():
            found[task_id].evaluations = held
        return found


def stored_columns(
    arena: Arena, store: Store, task_ids: list[str] | None = None
) -> tuple[dict[str, Task], Columns, list[int]] | None:
    """The stored runs of ``task_ids`` (all by default) read from their records as columns,
    with their tasks and each task's count of runs; ``None`` where scoring needs them as
    objects (a store without ``submission_records``, costs priced, a criterion that reads a
    run's meta or is slow to check, a workspace)."""
    with store.transaction(write=False) as tx:
        texts = getattr(tx, "submission_records", None)
        if texts is None or arena.pricer is not None:
            return None
        tasks = stored_tasks(tx, task_ids)
        if needs_whole_runs(arena.scorer, tasks.values()) or slow_checks(arena.scorer, tasks.values()):
            return None
        counts: list[int] = []
        records: list[Any] = []
        for task_id in tasks:
            mine = texts(task_id)
            counts.append(len(mine))
            records += map(_record, mine)
    columns = columns_from_records(  # each record was a model when it was stored
        records, arena.structure_submission, strict=arena.config.strict, with_meta=True, metas_checked=True
    )
    return None if columns is None else (tasks, columns, counts)


def _record(text: str) -> Any:
    """A stored record: orjson's parse, or the standard library's for what orjson refuses (a
    NaN or an integer past 64 bits, which the store's JSON keeps)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _scored_columns(
    arena: Arena, tasks: dict[str, Task], columns: Columns, counts: list[int], generations: Mapping[str, Hashable]
) -> dict[str, _Task]:
    """Each task of ``tasks`` scored from the columns of its runs (``counts`` rows each, in
    order): its evaluations built only when read, its cells summed from the scores' columns."""
    scored = arena.evaluate_many(columns, tasks, evaluated_at=datetime.now(UTC).isoformat()) if columns.size else []
    digests = task_run_digests(columns)
    found: dict[str, _Task] = {}
    start = 0
    for task_id, count in zip(tasks, counts, strict=True):
        stop = start + count
        entry = found[task_id] = _Task(task_id, generations.get(task_id))
        entry.meta = dict(zip(columns.ids[start:stop], (columns.metas or [])[start:stop], strict=True))
        entry.digest = digests.get(task_id, "")
        if isinstance(scored, EvaluationBatch):
            entry.evaluations = _Rows(scored, start, stop)
        else:
            entry.evaluations = list(scored[start:stop])
        start = stop
    return found


class _Rows(BuiltOnAccess[Evaluation]):
    """One task's rows of a batch, each evaluation built when read."""

    def __init__(self, batch: EvaluationBatch, start: int, stop: int) -> None:
        self.batch, self.start, self.stop = batch, start, stop

    def __len__(self) -> int:
        return self.stop - self.start

    def _item(self, position: int) -> Evaluation:
        return self.batch[self.start + position]


class _Task:
    """One task's current evaluations, its runs' meta and digest, the generation they were
    scored at, and their cells."""

    def __init__(self, task_id: str, generation: Hashable) -> None:
        self.task_id, self.generation = task_id, generation
        self.evaluations: Sequence[Evaluation] = []
        self.meta: dict[str, Mapping[str, Any]] = {}
        self.digest = ""
        self._cells: list[tuple[object, ...]] | None = None

    def cells(self, grouping: str) -> list[tuple[object, ...]]:
        if self._cells is None and isinstance(self.evaluations, _Rows):
            rows = self.evaluations
            self._cells = batch_cells(rows.batch, rows.start, rows.stop) if len(rows) else []
        if self._cells is None:
            ledger = CellLedger()
            for evaluation in self.evaluations:
                ledger.add(evaluation, 1)
            self._cells = [(*key, *sums) for key, sums in ledger.changes.items()]
        return [row[1:] for row in self._cells if row[0] == grouping]
