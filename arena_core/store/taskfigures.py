"""A batch's view of its tasks' stored figures and scores, for the SQLite and PostgreSQL stores:
each task's read from one index (or kept by the store between write transactions, see
:mod:`arena_core.store.figurecache`), and those of the tasks a batch is about to score read
ahead, several tasks in one statement (:meth:`TaskFigures.read_ahead`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arena_core.engine.columns import Columns
from arena_core.store.figurecache import PendingFigures, figure_columns, scores_of
from arena_core.store.standings import Scores
from arena_core.store.statements import LOOKED_UP, Statements

__all__ = ["FIGURES", "FIGURES_OF_TASK", "SCORES_OF_TASK", "TaskFigures"]

#: A run's figures that baselines and outlier rules read.
FIGURES = ("total_tokens", "tool_calls", "iterations", "execution_time", "estimated_cost")
#: A task's stored figures, first stored first (read from one index: store/schema.py).
FIGURES_OF_TASK = f"SELECT id, tool, model, {', '.join(FIGURES)} FROM submissions WHERE task_id = ? ORDER BY seq"
#: A task's stored scores, first stored first (read from one index, likewise).
SCORES_OF_TASK = (
    "SELECT submission_id, overall_score, tool, provisional FROM evaluations WHERE task_id = ? ORDER BY seq"
)
#: Several tasks' figures and scores (each task's in the order stored), read ahead at once.
_FIGURES_OF_TASKS = (
    f"SELECT task_id, id, tool, model, {', '.join(FIGURES)} FROM submissions WHERE {{among}} ORDER BY seq"
)
_SCORES_OF_TASKS = (
    "SELECT task_id, submission_id, overall_score, tool, provisional FROM evaluations WHERE {among} ORDER BY seq"
)


class TaskFigures(Statements):
    """The figures and scores part of a SQL store's transaction.

    :param figures: the tasks' figures and scores the store keeps, in a write transaction.
    """

    def __init__(self, connection: Any, mark: str = "?", figures: PendingFigures | None = None) -> None:
        super().__init__(connection, mark)
        self._figures = figures
        """The tasks' figures and scores the store keeps between write transactions, in a write
        transaction (:mod:`arena_core.store.figurecache`)."""
        self._counted: dict[str, int] = {}
        """The stored runs of each task :meth:`read_ahead` counted (as the transaction began)."""

    def submission_columns(self, task_id: str) -> Columns:
        """The task's stored figures, without parsing a stored record (read-only arrays): those
        the store keeps, else read from the database."""
        kept = self._figures.get("figures", task_id) if self._figures is not None else None
        if isinstance(kept, Columns):
            return kept
        columns = figure_columns(task_id, self._run(FIGURES_OF_TASK, task_id).fetchall(), FIGURES)
        if self._figures is not None:
            self._figures.put("figures", task_id, columns)
        return columns

    def scores(self, task_id: str) -> Scores:
        """The task's stored scores, tools and provisional marks, without parsing a stored record
        (read-only arrays): those the store keeps, else read from the database."""
        kept = self._figures.get("scores", task_id) if self._figures is not None else None
        if isinstance(kept, Scores):
            return kept
        found = _scores(self._run(SCORES_OF_TASK, task_id).fetchall())
        if self._figures is not None:
            self._figures.put("scores", task_id, found)
        return found

    def read_ahead(self, task_ids: Sequence[str], rows: int) -> int:
        """How many of ``task_ids``, from the first, this transaction now holds the figures and
        scores of: those it held already, then those read here, as many as hold ``rows`` stored
        runs together, in one statement for their figures and one for their scores. Read a task
        at a time, a cold batch over 500 tasks made 2,000 statements (its figures, then three
        counts to place its run), each a wait on a PostgreSQL server.

        A batch of a single task does not read ahead: a post's few runs are placed by counting
        through the scores' index (:meth:`standing`), whatever the task's history. 0 for a store
        that keeps no figures: it reads a task at a time."""
        held = self._figures
        if held is None:
            return 0
        window = list(task_ids[:LOOKED_UP])
        cold = {t for t in window if not isinstance(held.get("figures", t), Columns)}
        unscored = {t for t in window if not isinstance(held.get("scores", t), Scores)}
        uncounted = [t for t in cold if t not in self._counted]
        if uncounted:  # each task counted once in a transaction: only the group's size rests on it
            among, args = self._among("task_id", uncounted)
            self._counted.update(dict.fromkeys(uncounted, 0))
            self._counted.update(
                self._run(f"SELECT task_id, COUNT(*) FROM submissions WHERE {among} GROUP BY task_id", *args).fetchall()
            )
        taken: list[str] = []
        total = 0
        for task_id in window:
            kept = held.get("figures", task_id)
            total += len(kept.ids) if isinstance(kept, Columns) else self._counted[task_id]
            if taken and total > rows:
                break
            taken.append(task_id)
        for kind, wanted, sql, made in (
            ("figures", cold, _FIGURES_OF_TASKS, lambda t, found: figure_columns(t, found, FIGURES)),
            ("scores", unscored, _SCORES_OF_TASKS, lambda t, found: _scores(found)),
        ):
            reading = [t for t in taken if t in wanted]
            if not reading:
                continue
            among, args = self._among("task_id", reading)
            by_task: dict[str, list[tuple[Any, ...]]] = {t: [] for t in reading}
            for task_id, *row in self._run(sql.format(among=among), *args).fetchall():
                by_task[task_id].append(row)
            for task_id, found in by_task.items():
                held.put(kind, task_id, made(task_id, found))
        return len(taken)


def _scores(rows: Sequence[Sequence[Any]]) -> Scores:
    """A task's scores from its rows ``(submission id, overall score, tool, provisional)``."""
    ids, overall, tools, provisional = zip(*rows, strict=True) if rows else ([],) * 4
    return scores_of(ids, np.array(overall, dtype=float), tools, np.array(provisional, dtype=bool))
