"""The spec's evaluation pipeline over a store: parse, baseline, score, flag, rank, update, notify.

One batch is one store transaction. Every submission is parsed before anything is written;
if anything fails afterwards, the transaction is rolled back and the store is as it was. Only
after the commit are plugins notified, so a notification never announces a rolled-back result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from attrs import frozen

from arena_core.engine.ahead import Verdicts, check_ahead, checked_ahead
from arena_core.engine.collector import collector_paused
from arena_core.model.errors import ValidationError
from arena_core.model.records import Baseline, Evaluation, Submission, Task
from arena_core.model.serde import structure, structure_each
from arena_core.stats.irtdifficulty import adjusted_scores, fit_evaluations
from arena_core.stats.quality import Outlier
from arena_core.store.bulk import read_baselines, read_tasks, write_baselines
from arena_core.store.drift import BaselineDrift, RankDrift, group_means, rank_drift, top_groups
from arena_core.store.standings import rank_task
from arena_core.store.storedids import REPLACE_HINT, StoredIds
from arena_core.store.taskgroups import TaskRuns, baseline_key, run_tasks

if TYPE_CHECKING:
    from arena_core.arena import Arena
    from arena_core.store import Store, Transaction

__all__ = ["REPLACE_HINT", "TASKS_AT_ONCE", "BatchResult", "check_first", "process_batch", "rederive", "run_batch"]

#: Tasks whose records and stored baselines a batch reads in one statement each, and whose
#: next baselines it writes in one (a statement per task was a wait on PostgreSQL each): a
#: stretch at a time, so that a batch over 100,000 tasks does not hold every previous baseline.
TASKS_AT_ONCE = 500


@frozen
class BatchResult:
    """What one batch did."""

    evaluations: tuple[Evaluation, ...]
    """The batch's evaluations in input order, with their rank among all of the task's evaluations."""
    outliers: tuple[Outlier, ...]
    """Submissions of the batch flagged for manual review (judged against all of their task's submissions)."""
    baselines: Mapping[str, Baseline]
    """The baselines stored after the batch, by key (task id, or task and group), each with its version."""
    drift: tuple[BaselineDrift | RankDrift, ...] = ()
    """What the batch moved beyond the configured thresholds (``drift_threshold``,
    ``drift_top_k``): handed to ``arena_drift_detected`` after the commit."""


def check_first(
    arena: Arena,
    submissions: Sequence[Submission],
    store: Store,
    tasks: Mapping[str, Task] | None = None,
    *,
    pool: Executor | None = None,
) -> Verdicts:
    """The verdicts of the runs whose scoring would run slow checks (a workspace, a model judge),
    found before any write transaction is opened, so that no writer waits on them
    (:mod:`arena_core.engine.ahead`): each run's task is one of ``tasks`` or the store's."""
    scorer = arena.scorer
    known = dict(tasks or {})
    wanted = {s.task_id for s in submissions if s.task_id is not None and s.task_id not in known}
    if wanted:
        with store.transaction(write=False) as tx:
            known.update(read_tasks(tx, sorted(wanted)))
    items = [(s, known[s.task_id]) for s in submissions if s.task_id in known]
    return check_ahead(scorer, items, pool=pool, store=store)


def run_batch(
    arena: Arena,
    submissions: Iterable[Submission | Mapping[str, Any]],
    store: Store,
    tasks: Mapping[str, Task | Mapping[str, Any]] | None = None,
    *,
    replace: bool = False,
    checked: Verdicts | None = None,
) -> BatchResult:
    """The synchronous pipeline; :func:`process_batch` runs it off the event loop.

    A batch reads, for each task it touches, the stored submissions' figures and the stored
    evaluations' scores as columns (:mod:`arena_core.store.standings`), not the stored objects:
    its cost grows with the batch and with a few numbers per stored row of its tasks.

    :param tasks: stored with the batch, every one of them, whether or not it has submissions in it.
    :param replace: re-submitted ids (already stored for their task) replace the stored ones;
        without it they are refused, naming them.
    :param checked: the verdicts :func:`check_first` found for these runs; by default they are
        found here, before the write transaction opens.
    """
    stamp = datetime.now(UTC).isoformat()
    with collector_paused():  # a batch's records hold no cycles: see arena_core.engine.collector
        subs = structure_each(submissions, arena.structure_submission)  # 1. parse: all before any write
    seen: set[str] = set()
    for s in subs:
        if s.id in seen:
            raise ValidationError(
                f"submission {s.id!r}", "id", "an id unique within the batch", s.id, code="duplicate_id"
            )
        seen.add(s.id)
        if s.task_id is None:
            raise ValidationError(f"submission {s.id!r}", "task_id", "the id of the task it answers")
    given = {task_id: structure(t, Task) for task_id, t in (tasks or {}).items()}
    ids_stay = StoredIds()
    by_task: dict[str, list[int]] = {}
    for index, s in enumerate(subs):
        by_task.setdefault(s.task_id, []).append(index)  # type: ignore[arg-type]
    results: list[Evaluation] = [None] * len(subs)  # type: ignore[list-item]
    outliers: list[Outlier] = []
    baselines: dict[str, Baseline] = {}
    alerts: list[BaselineDrift | RankDrift] = []
    top_k, min_tasks = arena.config.drift_top_k, arena.config.min_tasks_per_group
    if checked is None:
        checked = check_first(arena, subs, store, given)
    # The slow checks ran above, with the collector on; the transaction's work is paused.
    with checked_ahead(checked), collector_paused(), store.transaction() as tx:
        top_before = top_groups(group_means(tx), top_k, min_tasks) if top_k else ()
        for task in given.values():
            tx.put_task(task)
        ids_stay.look_up(tx, [s.id for s in subs])
        for s in subs:  # an id names one run for good: answering another task is not the same run
            ids_stay.check(tx, s, replace)
        scope, in_order = arena.config.baseline_scope, list(by_task.items())
        for first in range(0, len(in_order), TASKS_AT_ONCE):  # tasks and baselines read and written a stretch at a time
            stretch = in_order[first : first + TASKS_AT_ONCE]
            known = read_tasks(tx, [t for t, _ in stretch if t not in given])
            keys = dict.fromkeys(baseline_key(subs[i], scope) for _, indices in stretch for i in indices)
            stored = read_baselines(tx, list(keys))
            group = []
            for task_id, indices in stretch:
                task = _task(given, known, task_id, subs[indices[0]])
                arena.scorer.check_task(task)
                batch = [subs[i] for i in indices]
                group.append(TaskRuns(task, batch, ids_stay.stored_for(task_id, (s.id for s in batch))))
            scored = run_tasks(arena, tx, group, stamp, replace, stored=stored)
            for (_, indices), ranked in zip(stretch, scored.ranked, strict=True):
                for i, ev in zip(indices, ranked, strict=True):
                    results[i] = ev
            outliers += scored.outliers
            alerts += scored.drift
            written = scored.baselines
            write_baselines(tx, written.items())  # 6. each key's next version
            baselines.update(written)
        if arena.config.difficulty_source == "irt":
            _refit_difficulty(arena, tx, results, by_task)
        if top_k and (reordered := rank_drift(top_before, top_groups(group_means(tx), top_k, min_tasks))):
            alerts.append(reordered)
    result = BatchResult(tuple(results), tuple(outliers), baselines, tuple(alerts))
    for ev in result.evaluations:  # 7. notification, after the commit
        arena.plugin_manager.hook.arena_evaluation_completed(evaluation=ev)
    arena.plugin_manager.hook.arena_batch_completed(result=result)
    if result.drift:
        arena.plugin_manager.hook.arena_drift_detected(alerts=list(result.drift))
    return result


def rederive(arena: Arena, tx: Transaction, task: Task, runs: list[Submission], stamp: str) -> list[Evaluation]:
    """Every stored run of ``task``, given again as ``runs`` (repriced, say), scored against
    baselines computed from them and stored as the next versions, ranked, and stored in place
    of the runs and evaluations before (see :mod:`arena_core.store.repricing`)."""
    arena.scorer.check_task(task)
    scored = run_tasks(arena, tx, [TaskRuns(task, runs)], stamp, replace=True, fresh=True)
    write_baselines(tx, scored.baselines.items())
    return scored.ranked[0]


def _refit_difficulty(arena: Arena, tx: Transaction, results: list[Evaluation], by_task: dict[str, list[int]]) -> None:
    """``difficulty_source = "irt"``: the batch's scores adjusted by difficulties fitted to every
    stored run and the batch (refitted as history grows), and ranked again among their tasks'
    stored evaluations. Stored evaluations keep the fit they were scored with."""
    fresh = {e.submission_id for e in results}
    stored = [e for t in tx.task_ids() for e in tx.evaluations(t) if e.submission_id not in fresh]
    found = fit_evaluations([*stored, *results])
    minimum = arena.config.min_submissions_per_tool
    for task_id, indices in by_task.items():
        ranked = rank_task(tx, task_id, adjusted_scores([results[i] for i in indices], found), minimum)
        for i, ev in zip(indices, ranked, strict=True):
            results[i] = ev


async def process_batch(
    arena: Arena,
    submissions: Iterable[Submission | Mapping[str, Any]],
    store: Store,
    tasks: Mapping[str, Task | Mapping[str, Any]] | None = None,
    *,
    replace: bool = False,
) -> BatchResult:
    """The spec's ``process_evaluation_batch``, run in a worker thread so the event loop stays free."""
    return await asyncio.to_thread(run_batch, arena, list(submissions), store, tasks, replace=replace)


def _task(given: Mapping[str, Task], stored: Mapping[str, Task], task_id: str, first: Submission) -> Task:
    """The batch's task ``task_id``, given with it or else stored."""
    task = given[task_id] if task_id in given else stored.get(task_id)
    if task is None:
        raise ValidationError(
            f"submission {first.id!r}", "task_id", "a task known to the store or given with the batch", task_id
        )
    return task
