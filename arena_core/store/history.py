"""An arena's history, read back from its store: the leaderboard after every stored batch,
every version of every baseline, and any stored score scored again against the baseline
version it names.

A dynamic baseline moves with each batch, so a score is only meaningful beside the baseline it
was computed against. The store keeps every baseline it replaces (``Baseline.version``) and each
evaluation names its version (``Evaluation.baseline_version``): :func:`rescore` shows that a
stored score still re-derives after later batches moved the baseline. The batches are told
apart by their evaluations' shared ``evaluated_at``; a re-submission that replaced a stored
one counts in the batch that replaced it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import frozen

from arena_core.model.errors import ArenaError, ValidationError
from arena_core.model.records import Baseline, Evaluation, Submission, Task
from arena_core.stats.leaderboard import GroupRow, leaderboard
from arena_core.stats.runs import check_by, group_labels
from arena_core.stats.tasktable import Runs, TaskTable
from arena_core.store.taskgroups import baseline_key

if TYPE_CHECKING:
    from arena_core.arena import Arena
    from arena_core.store import Store

__all__ = ["Standing", "baseline_history", "group_history", "rescore", "stored_baseline"]

_COLUMNS = ("submission_id", "task_id", "tool", "model", "overall_score", "evaluated_at", "baseline_version")


@frozen
class Standing:
    """The leaderboard as it stood after one stored batch."""

    batch: int
    """1 for the first batch stored, counting up."""
    evaluated_at: str
    """When the batch was scored (its evaluations' ``evaluated_at``)."""
    runs: int
    """Evaluations stored up to and including this batch."""
    groups: list[GroupRow]


def _evaluation_columns(tx: Any) -> dict[str, list[Any]]:
    offered = getattr(tx, "evaluation_columns", None)
    if offered is not None:
        columns: dict[str, list[Any]] = offered()
        return columns
    stored = [e for task_id in tx.task_ids() for e in tx.evaluations(task_id)]
    stored.sort(key=lambda e: e.evaluated_at)
    return {name: [getattr(e, name) for e in stored] for name in _COLUMNS}


def _aliased(arena: Arena, key: str, value: str | None) -> str | None:
    """A model by the name ``model_aliases`` gives it, as leaderboards group it."""
    return arena.config.model_aliases.get(value, value) if key == "model" and value is not None else value


def group_history(
    arena: Arena,
    store: Store,
    *,
    by: str = "tool",
    tasks: Collection[str] | None = None,
    last: int | None = None,
) -> list[Standing]:
    """The leaderboard (``by`` ``tool``, ``model`` or ``tool,model``; the configured aggregator
    and interval) over the evaluations stored up to each batch, oldest batch first.

    :param tasks: only these tasks' evaluations.
    :param last: only the last this-many batches (each still over everything stored before it).
    """
    keys = check_by(by)
    if by.startswith("meta."):
        raise ValidationError("history", "by", "'tool', 'model' or 'tool,model'", by)
    with store.transaction(write=False) as tx:
        columns = _evaluation_columns(tx)
    keep = np.ones(len(columns["submission_id"]), dtype=bool)
    if tasks is not None:
        wanted = set(tasks)
        keep = np.array([t in wanted for t in columns["task_id"]], dtype=bool)
    rows = np.flatnonzero(keep).tolist()
    stamps = sorted({columns["evaluated_at"][i] for i in rows})  # ISO-8601 in UTC: sorts by time
    index_of = {stamp: b for b, stamp in enumerate(stamps)}
    batch_index = np.array([index_of[columns["evaluated_at"][i]] for i in rows], dtype=np.int64)
    runs = Runs(
        [columns["submission_id"][i] for i in rows],
        group_labels([[_aliased(arena, k, columns[k][i]) for i in rows] for k in keys]) if len(rows) else [],
        [columns["task_id"][i] for i in rows],
        np.array([columns["overall_score"][i] for i in rows], dtype=float),
        {},
        np.full(len(rows), np.nan),
    )
    aggregator = arena.components.aggregators[arena.config.leaderboard_method]
    interval = arena.components.interval_methods[arena.config.leaderboard_interval]
    first = 0 if last is None else max(len(stamps) - last, 0)
    standings = []
    for b in range(first, len(stamps)):
        upto = batch_index <= b
        table = TaskTable.of(runs.select(upto))
        board = leaderboard(
            table,
            aggregator,
            interval,
            min_tasks=arena.config.min_tasks_per_group,
            ranks=arena.config.leaderboard_ranks,
            order=arena.config.leaderboard_order,
        )
        standings.append(Standing(b + 1, stamps[b], int(upto.sum()), board))
    return standings


def baseline_history(store: Store, *, tasks: Collection[str] | None = None) -> dict[str, list[Baseline]]:
    """Every version of every stored baseline (of these tasks), oldest first, by key."""
    with store.transaction(write=False) as tx:
        versioned = _versioned(tx)
        chosen = [k for k in versioned.baseline_keys() if tasks is None or k.split("\x1f")[0] in tasks]
        return {key: versioned.baseline_versions(key) for key in chosen}


def stored_baseline(
    arena: Arena, store: Store, task_id: str, submission_id: str
) -> tuple[Evaluation, Submission, Task, Baseline]:
    """The stored evaluation of a submission, the submission, its task and the baseline version
    the evaluation names (with the configuration the arena was stored with): everything a score
    card needs to explain the stored score."""
    with store.transaction(write=False) as tx:
        stored = next((e for e in tx.evaluations(task_id) if e.submission_id == submission_id), None)
        submission = next((s for s in tx.submissions(task_id) if s.id == submission_id), None)
        task = tx.get_task(task_id)
        if stored is None or submission is None or task is None:
            raise ArenaError(f"no stored evaluation of submission {submission_id!r} for task {task_id!r}")
        if stored.baseline_version is None:
            raise ArenaError(
                f"submission {submission_id!r} was scored before its store kept baseline versions: "
                "its baseline is not known"
            )
        key = baseline_key(submission, arena.config.baseline_scope)
        baseline = _versioned(tx).get_baseline_version(key, stored.baseline_version)
    if baseline is None:
        raise ArenaError(f"baseline version {stored.baseline_version} of {key!r} is not stored")
    return stored, submission, task, baseline


def rescore(arena: Arena, store: Store, task_id: str, submission_id: str) -> tuple[Evaluation, Evaluation]:
    """The stored evaluation of a submission, and the submission scored again now against the
    baseline version that evaluation names: their scores agree however far later batches moved
    the task's baseline (with the configuration the arena was stored with)."""
    stored, submission, task, baseline = stored_baseline(arena, store, task_id, submission_id)
    return stored, arena.evaluate(submission, task, baseline)


def _versioned(tx: Any) -> Any:
    if getattr(tx, "baseline_versions", None) is None:
        raise ArenaError("this store keeps no baseline versions (its transactions have no baseline_versions method)")
    return tx
