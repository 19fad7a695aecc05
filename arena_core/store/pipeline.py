"""The spec's evaluation pipeline over a store: parse, baseline, score, flag, rank, update, notify.

One batch is one store transaction. Every submission is parsed before anything is written;
if anything fails afterwards, the transaction is rolled back and the store is as it was. Only
after the commit are plugins notified, so a notification never announces a rolled-back result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import frozen

from arena_core.engine import ranking
from arena_core.engine.baselines import compute_baseline, scope_key
from arena_core.engine.columns import Columns, factorize_objects
from arena_core.engine.vectorised import evaluate_columns
from arena_core.model.errors import ValidationError
from arena_core.model.records import Baseline, Evaluation, Submission, Task
from arena_core.model.serde import structure, structure_each
from arena_core.stats import quality
from arena_core.stats.quality import Outlier

if TYPE_CHECKING:
    from arena_core.arena import Arena
    from arena_core.store import Store, Transaction

__all__ = ["BatchResult", "process_batch", "run_batch"]


@frozen
class BatchResult:
    """What one batch did."""

    evaluations: tuple[Evaluation, ...]
    """The batch's evaluations in input order, with their rank among all of the task's evaluations."""
    outliers: tuple[Outlier, ...]
    """Submissions of the batch flagged for manual review (judged against all of their task's submissions)."""
    baselines: Mapping[str, Baseline]
    """The baselines stored after the batch, by key (task id, or task and group)."""


def baseline_key(submission: Submission, scope: str) -> str:
    """The store key of a submission's baseline: its task id, plus its group under a scoped baseline."""
    task_id, *group = scope_key(submission, scope)
    key = task_id or ""
    return key if not group else "\x1f".join([key, *(g or "" for g in group)])


def run_batch(
    arena: Arena,
    submissions: Iterable[Submission | Mapping[str, Any]],
    store: Store,
    tasks: Mapping[str, Task | Mapping[str, Any]] | None = None,
    *,
    replace: bool = False,
) -> BatchResult:
    """The synchronous pipeline; :func:`process_batch` runs it off the event loop.

    :param tasks: stored with the batch, every one of them, whether or not it has submissions in it.
    :param replace: re-submitted ids (already stored for their task) replace the stored ones;
        without it they are refused, naming them.
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
    scope = arena.config.baseline_scope
    samples = arena.scorer.sample_fields()
    by_task: dict[str, list[int]] = {}
    for index, s in enumerate(subs):
        by_task.setdefault(s.task_id, []).append(index)  # type: ignore[arg-type]
    position = {s.id: i for i, s in enumerate(subs)}
    results: list[Evaluation] = [None] * len(subs)  # type: ignore[list-item]
    outliers: list[Outlier] = []
    baselines: dict[str, Baseline] = {}
    with store.transaction() as tx:
        for task in given.values():
            tx.put_task(task)
        for task_id, indices in by_task.items():
            task = _task(tx, task_id, given, subs[indices[0]])
            arena.scorer.check_task(task)
            batch = [subs[i] for i in indices]
            batch_ids = {s.id for s in batch}
            on_record = tx.submissions(task_id)  # read once: checked for re-submissions, then kept
            already = [s.id for s in on_record if s.id in batch_ids]
            if already and not replace:
                shown = ", ".join(repr(i) for i in already[:5]) + (
                    f" and {len(already) - 5} more" if len(already) > 5 else ""
                )
                raise ValidationError(
                    f"submission {already[0]!r}",
                    "id",
                    f"an id not yet stored for task {task_id!r} (stored already: {shown}; "
                    "replace them with replace=True, or arena ingest --replace)",
                    code="duplicate_id",
                )
            stored = [s for s in on_record if s.id not in batch_ids]  # re-submissions replace
            everyone = stored + batch
            default = task.default_baseline or arena.default_baseline
            keys = [baseline_key(s, scope) for s in batch]  # 2. baseline retrieval
            for key in dict.fromkeys(keys):
                if key not in baselines:
                    group = [s for s in everyone if baseline_key(s, scope) == key]
                    baselines[key] = tx.get_baseline(key) or compute_baseline(
                        task_id, group, default, now=stamp, samples=samples
                    )
            for i, ev in zip(
                indices, _score(arena, batch, task, [baselines[k] for k in keys], stamp), strict=True
            ):  # 3.
                results[i] = ev
            outliers += [o for o in quality.detect_outliers(everyone) if o.submission_id in batch_ids]  # 4.
            for s in batch:
                tx.put_submission(s)
            fresh = {results[i].submission_id: results[i] for i in indices}  # 5. ranking update
            task_evaluations = [e for e in tx.evaluations(task_id) if e.submission_id not in fresh]
            task_evaluations += list(fresh.values())
            provisional = ranking.provisional_tools(
                (e.tool for e in task_evaluations), arena.config.min_submissions_per_tool
            )
            for ev in ranking.annotate(task_evaluations, provisional):
                tx.put_evaluation(ev)
                if ev.submission_id in fresh:
                    results[position[ev.submission_id]] = ev
            for key in {baseline_key(s, scope) for s in batch}:  # 6. baseline update
                group = [s for s in everyone if baseline_key(s, scope) == key]
                baselines[key] = compute_baseline(task_id, group, default, now=stamp, samples=samples)
                tx.put_baseline(key, baselines[key])
    result = BatchResult(tuple(results), tuple(outliers), baselines)
    for ev in result.evaluations:  # 7. notification, after the commit
        arena.plugin_manager.hook.arena_evaluation_completed(evaluation=ev)
    arena.plugin_manager.hook.arena_batch_completed(result=result)
    return result


def _score(
    arena: Arena, batch: list[Submission], task: Task, row_baselines: list[Baseline], stamp: str
) -> list[Evaluation]:
    """One task's submissions scored against their baselines: by the batch path when every
    component has a batch form and no submission has a workspace to check, else record by
    record (ranks are assigned afterwards)."""
    codes, distinct = factorize_objects(row_baselines)
    scored = (
        None
        if any(s.workspace is not None for s in batch)
        else evaluate_columns(
            arena.scorer,
            Columns.from_submissions(batch),
            [task],
            np.zeros(len(batch), dtype=np.int64),
            distinct,
            codes,
            arena.config.min_submissions_per_tool,
            stamp,
        )
    )
    if scored is None:
        return arena.scorer.evaluate_all([(s, task, b) for s, b in zip(batch, row_baselines, strict=True)], stamp)
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


def _task(tx: Transaction, task_id: str, given: Mapping[str, Task], first: Submission) -> Task:
    if task_id in given:
        return given[task_id]
    task = tx.get_task(task_id)
    if task is None:
        raise ValidationError(
            f"submission {first.id!r}", "task_id", "a task known to the store or given with the batch", task_id
        )
    return task
