"""Per group and task, the sums a leaderboard is made of, kept up to date by every stored
evaluation, so that a leaderboard reads one row per group and task instead of every evaluation.

A task-mean leaderboard (its scores, Student-t intervals, rank ranges, tiers, dimension means,
coverage and inversions) needs, per group and task, the number of runs, the sum of their
overall scores and coverage, and per dimension the sum of its scores and how many runs measured
it. The SQLite and PostgreSQL stores keep those for groupings by tool and by model in ``board_cells``: an
evaluation stored adds its figures to its cells, an evaluation replaced takes its old ones away,
in the same transaction; :func:`task_table` turns the cells into the
:class:`~arena_core.stats.tasktable.TaskTable` every leaderboard statistic starts from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from arena_core.model.records import DIMENSIONS, Evaluation
from arena_core.stats.tasktable import TaskTable

__all__ = ["GROUPINGS", "SCHEMA", "CellLedger", "figures", "schema", "task_table"]

#: The groupings kept: by tool and by model.
GROUPINGS = ("tool", "model")
_SUMS = ("runs", "overall", "coverage", *(f"{d}{n}" for d in DIMENSIONS for n in ("", "_n")))


def schema(real: str = "REAL", whole: str = "INTEGER", suffix: str = " WITHOUT ROWID") -> str:
    """The cells' table, in a database's words for a float and a whole number."""
    return (
        "CREATE TABLE IF NOT EXISTS board_cells (grouping TEXT NOT NULL, grp TEXT NOT NULL, task_id TEXT NOT NULL, "
        + ", ".join(f"{name} {whole if name == 'runs' or name.endswith('_n') else real} NOT NULL" for name in _SUMS)
        + f", PRIMARY KEY (grouping, grp, task_id)){suffix}"
    )


#: The cells' table in SQLite.
SCHEMA = schema()


def figures(evaluation: Evaluation) -> list[float]:
    """What one evaluation adds to its cells, in the order of the table's sums."""
    out = [1.0, evaluation.overall_score, 1.0 if evaluation.coverage is None else evaluation.coverage]
    for dimension in DIMENSIONS:
        score = evaluation.scores.get(dimension)
        out += [0.0, 0.0] if score is None else [score, 1.0]
    return out


class CellLedger:
    """The changes a transaction made to the cells, written before the cells are read or the
    transaction commits."""

    def __init__(self) -> None:
        self.changes: dict[tuple[str, str, str], list[float]] = {}

    def add(self, evaluation: Evaluation, sign: float) -> None:
        """Add (``sign`` 1) or take away (-1) an evaluation's figures."""
        values = figures(evaluation)
        for grouping in GROUPINGS:
            key = (grouping, getattr(evaluation, grouping) or "", evaluation.task_id)
            change = self.changes.setdefault(key, [0.0] * len(_SUMS))
            for i, value in enumerate(values):
                change[i] += sign * value

    def flush(self, connection: Any, mark: str = "?") -> None:
        """Write the changes through ``connection`` (a SQLite connection, or a psycopg cursor with
        ``mark`` ``%s``)."""
        if not self.changes:
            return
        names = ", ".join(_SUMS)
        connection.executemany(
            f"INSERT INTO board_cells (grouping, grp, task_id, {names}) VALUES ({', '.join([mark] * (3 + len(_SUMS)))}) "
            "ON CONFLICT (grouping, grp, task_id) DO UPDATE SET "
            + ", ".join(f"{n} = board_cells.{n} + excluded.{n}" for n in _SUMS),
            [(*key, *values) for key, values in self.changes.items()],
        )
        connection.execute("DELETE FROM board_cells WHERE runs <= 0")
        self.changes.clear()

    def group_means(self, connection: Any, mark: str = "?") -> list[tuple[str | None, float, int]]:
        """Per tool: the mean over its tasks of its per-task mean overall score, and its number of
        tasks: a read of one row per task and tool, not of every evaluation."""
        self.flush(connection, mark)
        rows = connection.execute(
            "SELECT NULLIF(grp, ''), AVG(overall / runs), COUNT(*) FROM board_cells WHERE grouping = 'tool' GROUP BY grp"
        ).fetchall()
        return [(tool, float(mean), int(n)) for tool, mean, n in rows]

    def rows(self, connection: Any, grouping: str, mark: str = "?") -> list[tuple[object, ...]]:
        """The cells of ``grouping`` (``tool`` or ``model``): (group or "", task, sums...)."""
        self.flush(connection, mark)
        query = (
            f"SELECT grp, task_id, {', '.join(_SUMS)} FROM board_cells WHERE grouping = {mark} ORDER BY grp, task_id"
        )
        found: list[tuple[object, ...]] = connection.execute(query, (grouping,)).fetchall()
        return found


def task_table(rows: Sequence[tuple[object, ...]], unknown: str) -> TaskTable:
    """The :class:`TaskTable` of a grouping's cells (no group: ``unknown``): counts, sums and
    means per group and task. Run-level arrays are empty: aggregators that read single runs
    (``pooled``) need the evaluations themselves."""
    groups = sorted({str(r[0]) or unknown for r in rows})
    tasks = sorted({str(r[1]) for r in rows})
    g_index = {g: i for i, g in enumerate(groups)}
    t_index = {t: i for i, t in enumerate(tasks)}
    shape = (len(groups), len(tasks))
    sums = np.zeros((len(_SUMS), *shape))
    for row in rows:
        sums[:, g_index[str(row[0]) or unknown], t_index[str(row[1])]] = [float(v) for v in row[2:]]  # type: ignore[arg-type]
    counts = sums[0].astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = {
            d: np.where(sums[4 + 2 * k] > 0, sums[3 + 2 * k] / sums[4 + 2 * k], math.nan)
            for k, d in enumerate(DIMENSIONS)
        }
        coverage = np.where(counts > 0, sums[2] / np.maximum(counts, 1), math.nan)
    empty = np.zeros(0)
    return TaskTable(
        groups,
        tasks,
        counts,
        sums[1],
        empty.astype(np.int64),
        empty.astype(np.int64),
        empty,
        {d: m for d, m in means.items() if not np.isnan(m).all()},
        coverage,
    )
