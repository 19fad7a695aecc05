"""Per group and task, the sums a leaderboard is made of, kept up to date by every stored
evaluation, so that a leaderboard reads one row per group and task instead of every evaluation.

A task-mean leaderboard (its scores, Student-t intervals, rank ranges, tiers, dimension means,
coverage and inversions) needs, per group and task, the number of runs, the sum of their
overall scores and coverage, and per dimension the sum of its scores and how many runs measured
it. The SQLite and PostgreSQL stores keep those for groupings by tool and by model in ``board_cells``: an
evaluation stored adds its figures to its cells, an evaluation replaced takes its old ones away,
in the same transaction; :func:`task_table` turns the cells into the
:class:`~arena_core.stats.tasktable.TaskTable` every leaderboard statistic starts from.

Scores as the engine rounds them (hundredths; coverage in ten-thousandths) are also summed as
whole numbers of their units, which adding and taking away keep exact however often evaluations
are replaced: while every evaluation of a cell is such a number (``inexact`` counts those that
are not), its sums are those whole numbers, divided once, and so the very figures a leaderboard
computed from the evaluations gives (:class:`~arena_core.stats.tasktable.TaskTable` sums them
alike). The float sums beside them, which drift by the last bits as figures are added and taken
away, serve a cell only while it holds a figure of finer grain.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from arena_core.engine.columns import factorize
from arena_core.engine.results import EvaluationBatch
from arena_core.model.records import DIMENSIONS, Evaluation
from arena_core.stats.runs import distinct_names
from arena_core.stats.tasktable import TaskTable

__all__ = ["GROUPINGS", "SCHEMA", "SUMS", "CellLedger", "batch_cells", "figures", "schema", "task_table"]

#: The groupings kept: by tool and by model.
GROUPINGS = ("tool", "model")
#: The figures summed, and how many of their units make one (the engine's rounding).
_SCALES = {"overall": 100, "coverage": 10_000, **dict.fromkeys(DIMENSIONS, 100)}
_SCALE_VALUES = tuple(_SCALES.values())
_COUNTS = ("runs", "inexact")  # runs, and those with a figure of finer grain than its units
_UNITS = tuple(f"{f}_units" for f in _SCALES)
_MEASURED = tuple(f"{d}_n" for d in DIMENSIONS)  # runs that measured each dimension
_WHOLE = (*_COUNTS, *_UNITS, *_MEASURED)
#: The sums a cell keeps, in the order of its columns (and of :meth:`CellLedger.rows` after group and task).
SUMS = (*_COUNTS, *_SCALES, *_UNITS, *_MEASURED)


def schema(real: str = "REAL", whole: str = "INTEGER", suffix: str = " WITHOUT ROWID") -> str:
    """The cells' table, in a database's words for a float and a whole number."""
    return (
        "CREATE TABLE IF NOT EXISTS board_cells (grouping TEXT NOT NULL, grp TEXT NOT NULL, task_id TEXT NOT NULL, "
        + ", ".join(f"{name} {whole if name in _WHOLE else real} NOT NULL" for name in SUMS)
        + f", PRIMARY KEY (grouping, grp, task_id)){suffix}"
    )


#: The cells' table in SQLite.
SCHEMA = schema()


def figures(evaluation: Evaluation) -> list[float | int]:
    """What one evaluation adds to its cells, in the order of the table's sums: whole numbers
    (Python's, exact however large) for the counts and units, floats for the float sums."""
    coverage, scores = evaluation.coverage, evaluation.scores
    measured = [evaluation.overall_score, 1.0 if coverage is None else coverage, *(scores.get(d) for d in DIMENSIONS)]
    floats: list[float | int] = []
    units: list[float | int] = []
    inexact = 0
    for value, scale in zip(measured, _SCALE_VALUES, strict=True):
        if value is None:  # a dimension not measured
            floats.append(0.0)
            units.append(0)
            continue
        # a figure no whole number of units gives (of finer grain, or far out of range) marks the cell inexact
        unit = round(value * scale) if math.isfinite(value) and abs(value) < 1e6 else 0
        if unit / scale != value:
            inexact = 1
        floats.append(float(value))
        units.append(unit)
    return [1, inexact, *floats, *units, *(int(value is not None) for value in measured[2:])]


def batch_cells(batch: EvaluationBatch, start: int, stop: int) -> list[tuple[object, ...]]:
    """The cells of the batch's rows ``start:stop`` (grouping, group or "", task, sums...), as a
    :class:`CellLedger` adding their evaluations in order gives them, to the bit, without
    building an evaluation: :func:`figures` over columns, whole numbers summed exactly and the
    float sums by ``np.bincount``, which adds in row order as the ledger does."""
    rows = slice(start, stop)
    codes = batch.task_codes[rows]
    in_profile = np.array([[d in p.weights for d in DIMENSIONS] for p in batch.profiles], dtype=bool).reshape(
        -1, len(DIMENSIONS)
    )
    measured_dims = in_profile[codes]
    for k, d in enumerate(DIMENSIONS):
        raw = batch.raw_scores.get(d)
        measured_dims[:, k] &= False if raw is None else ~np.isnan(raw[rows])
    scores = [batch.scores[d][rows] if d in batch.scores else np.zeros(stop - start) for d in DIMENSIONS]
    values = np.column_stack([batch.overall[rows], batch.coverage[rows], *scores]).astype(float)
    measured = np.column_stack([np.ones((stop - start, 2), dtype=bool), measured_dims])
    values[~measured] = 0.0
    whole = _whole_figures(values, measured)
    out: list[tuple[object, ...]] = []
    task_id = str(batch.task_ids[start]) if stop > start else ""
    for grouping, names in (("tool", batch.tools), ("model", batch.models)):
        group_codes, groups = factorize([name or "" for name in names[start:stop]])
        for group, sums in zip(groups, _summed(group_codes, len(groups), whole, values), strict=True):
            out.append((grouping, group, task_id, *sums))
    return out


def _whole_figures(values: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """Per row, the whole numbers :func:`figures` gives (1 run, inexact, each figure's units,
    each dimension measured), from the figures' values (0 where not measured) and whether each
    was measured: columns in the order of :data:`_SCALES`."""
    scale = np.array(_SCALE_VALUES, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = np.isfinite(values) & (np.abs(values) < 1e6)
        units = np.where(scaled, np.rint(np.where(scaled, values, 0.0) * scale), 0.0)
        inexact = (units / scale != values).any(axis=1)  # an unmeasured figure is 0, in whole units
    return np.column_stack([np.ones(len(values)), inexact, units, measured[:, 2:]]).astype(np.int64)


def _summed(codes: np.ndarray, count: int, whole: np.ndarray, floats: np.ndarray) -> list[list[float | int]]:
    """Per code ``0..count-1``, the sums of its rows in the order of :data:`SUMS`: the whole
    numbers by ``np.add.reduceat`` (exact), the floats by ``np.bincount``, which adds in row
    order as :meth:`CellLedger.add` does."""
    order = np.argsort(codes, kind="stable")
    firsts = np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0])
    sums_whole = (np.add.reduceat(whole[order], firsts, axis=0) if len(order) else whole[:0]).tolist()
    sums_float = np.column_stack(
        [np.bincount(codes, weights=floats[:, k], minlength=count) for k in range(floats.shape[1])]
    ).tolist()
    n_counts = len(_COUNTS)
    return [[*w[:n_counts], *f, *w[n_counts:]] for w, f in zip(sums_whole, sums_float, strict=True)]


class CellLedger:
    """The changes a transaction made to the cells, written before the cells are read or the
    transaction commits."""

    def __init__(self) -> None:
        self.changes: dict[tuple[str, str, str], list[float]] = {}

    def add(self, evaluation: Evaluation, sign: int) -> None:
        """Add (``sign`` 1) or take away (-1) an evaluation's figures."""
        values = figures(evaluation)
        for grouping in GROUPINGS:
            self._add_to((grouping, getattr(evaluation, grouping) or "", evaluation.task_id), values, sign)

    def add_all(self, evaluations: Sequence[Evaluation], sign: int = 1) -> None:
        """:meth:`add` of each evaluation in order, with the same sums to the bit: each figure is
        worked out for all of them at once, and a cell this transaction has not changed yet gets
        its whole sums by ``np.add.reduceat`` and its float sums by ``np.bincount``, which adds
        in row order as :meth:`add` does (a cell changed before is added to one run at a time)."""
        if not evaluations:
            return
        given = [
            [e.overall_score, 1.0 if e.coverage is None else e.coverage, *(e.scores.get(d) for d in DIMENSIONS)]
            for e in evaluations
        ]
        measured = np.array([[value is not None for value in row] for row in given], dtype=bool)
        values = np.array([[0.0 if value is None else value for value in row] for row in given], dtype=float)
        whole, floats = sign * _whole_figures(values, measured), sign * values
        for grouping in GROUPINGS:
            codes, keys = factorize([(grouping, getattr(e, grouping) or "", e.task_id) for e in evaluations])
            for code, (key, sums) in enumerate(zip(keys, _summed(codes, len(keys), whole, floats), strict=True)):
                if key in self.changes:
                    for row in np.flatnonzero(codes == code).tolist():
                        self._add_to(key, figures(evaluations[row]), sign)
                    continue
                self.changes[key] = sums

    def _add_to(self, key: tuple[str, str, str], values: list[float | int], sign: int) -> None:
        if sign != 1:
            values = [sign * value for value in values]
        change = self.changes.get(key)
        if change is None:
            change = self.changes[key] = [0] * len(SUMS)
        change[:] = map(operator.add, change, values)

    def flush(self, connection: Any, mark: str = "?") -> None:
        """Write the changes through ``connection`` (a SQLite connection, or a psycopg cursor with
        ``mark`` ``%s``)."""
        if not self.changes:
            return
        names = ", ".join(SUMS)
        connection.executemany(
            f"INSERT INTO board_cells (grouping, grp, task_id, {names}) VALUES ({', '.join([mark] * (3 + len(SUMS)))}) "
            "ON CONFLICT (grouping, grp, task_id) DO UPDATE SET "
            + ", ".join(f"{n} = board_cells.{n} + excluded.{n}" for n in SUMS),
            [(*key, *values) for key, values in self.changes.items()],
        )
        connection.execute("DELETE FROM board_cells WHERE runs <= 0")
        self.changes.clear()

    def group_means(self, connection: Any, mark: str = "?") -> list[tuple[str | None, float, int]]:
        """Per tool: the mean over its tasks of its per-task mean overall score, and its number of
        tasks: a read of one row per task and tool, not of every evaluation."""
        self.flush(connection, mark)
        rows = connection.execute(
            "SELECT NULLIF(grp, ''), AVG(CASE WHEN inexact = 0 THEN CAST(overall_units AS DOUBLE PRECISION) / "
            f"{_SCALES['overall']}.0 ELSE overall END / runs), COUNT(*) FROM board_cells WHERE grouping = 'tool' "
            "GROUP BY grp"
        ).fetchall()
        return [(tool, float(mean), int(n)) for tool, mean, n in rows]

    def rows(self, connection: Any, grouping: str, mark: str = "?") -> list[tuple[object, ...]]:
        """The cells of ``grouping`` (``tool`` or ``model``): (group or "", task, sums...)."""
        self.flush(connection, mark)
        query = f"SELECT grp, task_id, {', '.join(SUMS)} FROM board_cells WHERE grouping = {mark} ORDER BY grp, task_id"
        found: list[tuple[object, ...]] = connection.execute(query, (grouping,)).fetchall()
        return found


def task_table(rows: Sequence[tuple[object, ...]]) -> TaskTable:
    """The :class:`TaskTable` of a grouping's cells: counts, sums and means per group and task,
    each group named as leaderboards name it (no group: ``(unknown)``, never the same group as a
    name spelled so). Run-level arrays are empty: aggregators that read single runs (``pooled``)
    need the evaluations themselves."""
    keys = sorted({str(r[0]) for r in rows})
    groups = distinct_names([(key or None,) for key in keys])
    tasks = sorted({str(r[1]) for r in rows})
    g_index = {g: i for i, g in enumerate(keys)}
    t_index = {t: i for i, t in enumerate(tasks)}
    shape = (len(groups), len(tasks))
    sums = {name: np.zeros(shape) for name in ("runs", *_SCALES, *_MEASURED)}
    for row in rows:
        cell = (g_index[str(row[0])], t_index[str(row[1])])
        found: dict[str, Any] = dict(zip(SUMS, row[2:], strict=True))
        exact = found["inexact"] == 0
        for name, total in sums.items():
            scale = _SCALES.get(name)
            total[cell] = int(found[f"{name}_units"]) / scale if scale is not None and exact else float(found[name])
    counts = sums["runs"].astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = {d: np.where(sums[f"{d}_n"] > 0, sums[d] / sums[f"{d}_n"], math.nan) for d in DIMENSIONS}
        coverage = np.where(counts > 0, sums["coverage"] / np.maximum(counts, 1), math.nan)
    empty = np.zeros(0)
    return TaskTable(
        groups,
        tasks,
        counts,
        sums["overall"],
        empty.astype(np.int64),
        empty.astype(np.int64),
        empty,
        {d: m for d, m in means.items() if not np.isnan(m).all()},
        coverage,
    )
