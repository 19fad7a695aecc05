"""The spec's evaluation pipeline over a store: parse, baseline, score, flag, rank, update, notify.

One batch is one store transaction. Every submission is parsed before anything is written;
if anything fails afterwards, the transaction is rolled back and the store is as it was. Only
after the commit are plugins notified, so a notification never announces a rolled-back result.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
from attrs import frozen

from arena_core.engine.ahead import Verdicts, check_ahead, checked_ahead
from arena_core.engine.baselines import scope_key
from arena_core.engine.columns import Columns, factorize, factorize_objects
from arena_core.engine.each import evaluate_each
from arena_core.engine.gating import Gated, gate_scores, passes
from arena_core.engine.grouped import group_baselines, passed_baselines
from arena_core.engine.vectorised import evaluate_columns
from arena_core.model.errors import ValidationError
from arena_core.model.records import Baseline, Evaluation, Submission, Task
from arena_core.model.serde import structure, structure_each
from arena_core.stats.irtdifficulty import adjusted_scores, fit_evaluations
from arena_core.stats.quality import Outlier, outliers_in_columns
from arena_core.store.bulk import read_baselines, read_tasks, write_baselines
from arena_core.store.drift import BaselineDrift, RankDrift, baseline_drift, group_means, rank_drift, top_groups
from arena_core.store.standings import put_all, rank_task, submission_columns
from arena_core.store.storedids import REPLACE_HINT, StoredIds

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


def baseline_key(submission: Submission, scope: str) -> str:
    """The store key of a submission's baseline: its task id, plus its group under a scoped baseline."""
    task_id, *group = scope_key(submission, scope)
    return _key(task_id, group)


def _key(task_id: str | None, group: Sequence[str | None]) -> str:
    key = task_id or ""
    return key if not group else "\x1f".join([key, *(g or "" for g in group)])


def _key_codes(columns: Columns, task_id: str, scope: str) -> tuple[np.ndarray, list[str]]:
    """The code of every row's :func:`baseline_key` among the distinct keys, and those keys:
    the rows are one task's, so under the task scope every row has the task's own key (keying a
    history of 10,000 runs a row at a time took 0.5 ms a batch)."""
    if scope == "task":
        return np.zeros(columns.size, dtype=np.int64), [task_id]
    extra: list[Sequence[str | None]] = {
        "task_tool": [columns.tools],
        "task_model": [columns.models],
        "task_tool_model": [columns.tools, columns.models],
    }[scope]
    return factorize([_key(t, group) for t, group in zip(columns.task_ids, zip(*extra, strict=True), strict=True)])


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
    with checked_ahead(checked), store.transaction() as tx:
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
            stored, written = read_baselines(tx, list(keys)), {}
            for task_id, indices in stretch:
                task = _task(given, known, task_id, subs[indices[0]])
                arena.scorer.check_task(task)
                batch = [subs[i] for i in indices]
                stored_here = ids_stay.stored_for(task_id, (s.id for s in batch))
                fresh, task_outliers, task_baselines, moved = _run_task(
                    arena, tx, task, batch, stamp, replace, stored_here, stored=stored
                )
                for i, ev in zip(indices, fresh, strict=True):
                    results[i] = ev
                outliers += task_outliers
                written.update(task_baselines)
                alerts += moved
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
    ranked, _, updated, _ = _run_task(arena, tx, task, runs, stamp, replace=True, fresh=True)
    write_baselines(tx, updated.items())
    return ranked


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


def _run_task(
    arena: Arena,
    tx: Transaction,
    task: Task,
    batch: list[Submission],
    stamp: str,
    replace: bool,
    stored_here: set[str] | None = None,
    fresh: bool = False,
    stored: Mapping[str, Baseline | None] | None = None,
) -> tuple[list[Evaluation], list[Outlier], dict[str, Baseline], list[BaselineDrift]]:
    """Steps 2-6 for one task's submissions of the batch: their evaluations (ranked among all
    of the task's, each naming the baseline version it was scored against), the outliers among
    them, the baselines stored after them (each the next version of its key) and the medians
    those moved beyond ``drift_threshold``.

    :param stored_here: the batch's ids stored for the task already, when the batch looked them
        up (else they are found among the task's stored ids).
    :param fresh: score against the baselines computed with the batch (stored as the next
        versions) rather than against the stored ones.
    :param stored: the stored baselines the batch read at once, by key (a key not among them is
        read here). The next versions are returned, not written: the caller writes them."""
    scope = arena.config.baseline_scope
    on_record = submission_columns(tx, task.id)  # read once: checked for re-submissions, then kept
    stored_again = {s.id for s in batch}.intersection(on_record.ids) if stored_here is None else stored_here
    already = [i for i in on_record.ids if i in stored_again] if stored_again else []
    if already and not replace:
        shown = ", ".join(repr(i) for i in already[:5]) + (f" and {len(already) - 5} more" if len(already) > 5 else "")
        raise ValidationError(
            f"submission {already[0]!r}",
            "id",
            f"an id not yet stored for task {task.id!r} (stored already: {shown}; replace them with {REPLACE_HINT})",
            code="duplicate_id",
        )
    if already:  # re-submissions replace the stored rows
        on_record = on_record.take(np.array([i not in stored_again for i in on_record.ids], dtype=bool))
    incoming = Columns.from_submissions(batch)
    everyone = Columns.concat([on_record, incoming], in_place=True)
    # 2. baseline retrieval: the stored baseline, else (and 6. afterwards) the group's statistics.
    key_codes, keys = _key_codes(everyone, task.id, scope)
    default = task.default_baseline or arena.default_baseline
    arguments = (  # what each key's baseline is computed with, past its rows and their groups
        len(keys),
        [default] * len(keys),
        [task.id] * len(keys),
        stamp,
        arena.scorer.sample_fields(),
        arena.scorer.assumes_one_iteration,
    )

    def baselines_of(table: Sequence[Baseline]) -> dict[str, Baseline]:
        return dict(zip(keys, table, strict=True))

    computed = baselines_of(group_baselines(everyone, key_codes, *arguments))
    first_row = len(everyone.ids) - len(batch)
    batch_keys = [keys[c] for c in key_codes[first_row:].tolist()]
    wanted = list(dict.fromkeys(batch_keys))
    unread = [key for key in wanted if stored is None or key not in stored]
    read = {**(stored or {}), **(read_baselines(tx, unread) if unread else {})}
    stored = {key: read[key] for key in wanted}
    # Without a stored baseline (or fresh), the batch is scored against the one stored after it.
    retrieved = _retrieved(stored, computed, fresh)
    gated = None
    gate = arena.scorer.gate
    if gate is not None and gate in arena.scorer.profile_for(task).weights:
        # Under a gate, the resource baselines come from the runs that passed it (engine/gating.py):
        # the stored runs by their stored scores, the batch's by a first pass.
        first = _score(arena, batch, incoming, task, [retrieved[k] for k in batch_keys], stamp)
        on_file = {e.submission_id: e.scores.get(gate, math.nan) for e in tx.evaluations(task.id)}
        earlier = np.array([on_file.get(i, math.nan) for i in on_record.ids], dtype=float)
        ran = np.concatenate([passes(earlier), passes(gate_scores(first, gate))])
        table, none_passed = passed_baselines(everyone, key_codes, *arguments, ran)
        computed = baselines_of(table)
        retrieved = _retrieved(stored, computed, fresh)
        gated = Gated(none_passed[key_codes[first_row:]], first, gate)
    scored = _score(arena, batch, incoming, task, [retrieved[k] for k in batch_keys], stamp, gated)  # 3.
    found = outliers_in_columns(everyone, first_row)  # 4. the batch's runs, among all of the task's
    put_all(tx, "submission", batch)
    minimum, versions = arena.config.min_submissions_per_tool, [retrieved[k].version for k in batch_keys]
    ranked = rank_task(tx, task.id, scored, minimum, versions)  # 5. ranking update
    updated, moved = {}, []
    threshold = arena.config.drift_threshold
    for key, previous in stored.items():  # 6. baseline update: the next version of each
        updated[key] = attrs.evolve(computed[key], version=(previous.version or 0) + 1 if previous else 1)
        if previous is not None and threshold:
            moved += baseline_drift(key, previous, updated[key], threshold)
    return ranked, found, updated, moved


def _retrieved(
    stored: Mapping[str, Baseline | None], computed: Mapping[str, Baseline], fresh: bool
) -> dict[str, Baseline]:
    """The baseline each key's runs are scored against: the stored one, else (or when
    ``fresh``) the one computed with the batch, as the version it will be stored as."""
    return {
        key: b if b is not None and not fresh else attrs.evolve(computed[key], version=(b.version or 0) + 1 if b else 1)
        for key, b in stored.items()
    }


def _score(
    arena: Arena,
    batch: list[Submission],
    columns: Columns,
    task: Task,
    row_baselines: list[Baseline],
    stamp: str,
    gated: Gated | None = None,
) -> list[Evaluation]:
    """One task's submissions scored against their baselines: by the batch path when every
    component has a batch form and no submission has a workspace to check, else record by
    record (ranks are assigned afterwards).

    :param gated: the second pass under a gate: per submission, whether no run of its task
        passed the gate, and the gate's result of the first pass (not checked again).
    """
    codes, distinct = factorize_objects(row_baselines)
    scored = (
        None
        if any(s.workspace is not None for s in batch)
        else evaluate_columns(
            arena.scorer,
            columns,
            [task],
            np.zeros(len(batch), dtype=np.int64),
            distinct,
            codes,
            arena.config.min_submissions_per_tool,
            stamp,
            unsolved=None if gated is None else gated.unsolved,
        )
    )
    if scored is None:
        items = [(s, task, b) for s, b in zip(batch, row_baselines, strict=True)]
        return evaluate_each(arena.scorer, items, stamp, None if gated is None else gated.per_record())
    return list(scored)


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
