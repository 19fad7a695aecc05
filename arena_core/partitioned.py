"""Scoring split by task over a cluster's workers: ``check_executor = "dask"`` (``--executor dask``).

A task's baseline, ranks, percentiles and provisional marks depend only on its own runs, so
the runs can be split into partitions of whole tasks, each scored by ``evaluate_many`` on a
worker (which builds its Arena from the same configuration once, as the check executor's
workers do), and the evaluations put back in input order: the same evaluations as one call
would give. The one statistic across tasks, a fitted difficulty (``difficulty_source =
"irt"``), is fitted afterwards on all of them, here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import attrs
import numpy as np

from arena_core.arena import Arena, worker_arena
from arena_core.engine.columns import Columns
from arena_core.model.errors import ArenaError
from arena_core.model.records import Evaluation, Submission, Task
from arena_core.stats import irtdifficulty

__all__ = ["evaluate_partitioned", "task_partitions"]

#: Partitions per worker: a few, so a worker that finishes early takes another.
_PER_WORKER = 4


def task_partitions(task_ids: Sequence[str | None], count: int) -> list[list[int]]:
    """The rows split into at most ``count`` partitions of whole tasks, each partition's rows in
    input order; tasks dealt largest first to the partition with the fewest rows so far."""
    rows: dict[str | None, list[int]] = {}
    for row, task in enumerate(task_ids):
        rows.setdefault(task, []).append(row)
    parts: list[list[int]] = [[] for _ in range(max(1, min(count, len(rows))))]
    for task_rows in sorted(rows.values(), key=len, reverse=True):
        min(parts, key=len).extend(task_rows)
    return [sorted(part) for part in parts if part]


def evaluate_partitioned(
    arena: Arena,
    submissions: Sequence[Submission] | Columns,
    tasks: Mapping[str, Task],
    *,
    evaluated_at: str | None = None,
) -> list[Evaluation]:
    """``arena.evaluate_many(submissions, tasks)``, its task partitions scored on the configured
    check executor's workers (``check_concurrency`` of them for a local cluster).

    :raises ArenaError: the executor cannot start (Dask not installed, no scheduler there).
    """
    stamp = evaluated_at or datetime.now(UTC).isoformat()
    task_ids = submissions.task_ids if isinstance(submissions, Columns) else [s.task_id for s in submissions]
    workers = arena.config.check_concurrency
    parts = task_partitions(task_ids, workers * _PER_WORKER)
    # Workers score with the labels' difficulty; a fitted one is fitted below, over every task.
    config = attrs.evolve(arena.config, difficulty_source="label", check_executor="threads")
    if arena.recipe is None:
        raise ArenaError("an Arena with plugins registered by hand cannot score on workers: use evaluate_many")
    executor = arena.components.check_executors[arena.config.check_executor].start(workers)
    try:
        futures = []
        for part in parts:
            own = {t: tasks[t] for t in {task_ids[i] for i in part} if t is not None and t in tasks}
            job = ((config, *arena.recipe[1:]), _rows(submissions, part), own, stamp)
            futures.append(executor.submit(_score_part, *job))
        scored = [future.result() for future in futures]
    finally:
        executor.shutdown()
    out: list[Evaluation] = [None] * len(task_ids)  # type: ignore[list-item]
    for part, evaluations in zip(parts, scored, strict=True):
        for row, evaluation in zip(part, evaluations, strict=True):
            out[row] = attrs.evolve(evaluation, provenance=arena.provenance)
    if arena.config.difficulty_source == "irt":
        out = irtdifficulty.refit(out, arena.config.min_submissions_per_tool)
    return out


def _rows(submissions: Sequence[Submission] | Columns, rows: list[int]) -> Sequence[Submission] | Columns:
    if isinstance(submissions, Columns):
        return submissions.take(np.array(rows, dtype=np.intp))
    return [submissions[i] for i in rows]


def _score_part(recipe: tuple[Any, ...], submissions: Any, tasks: Mapping[str, Task], stamp: str) -> list[Evaluation]:
    """One partition scored on a worker, by the Arena built there once from ``recipe``."""
    return list(worker_arena(*recipe).evaluate_many(submissions, tasks, evaluated_at=stamp))
