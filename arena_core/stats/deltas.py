"""Two scorings of the same submissions as columns, and their per-submission differences as a
sequence that builds each row's dict only when it is read.

A comparison of a million submissions holds a few arrays here, not a million dicts: the
report's statistics are computed on the arrays, and a row is built for the movers it lists
or for a caller who reads it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np
from attrs import frozen

from arena_core.engine.results import EvaluationBatch
from arena_core.engine.rounding import round_exact
from arena_core.model.records import DIMENSIONS, Evaluation
from arena_core.stats.tasktable import cell_means, measured_mean

__all__ = ["Side", "SubmissionDeltas", "GroupMeans", "top_k_ids"]


@frozen
class Side:
    """One scoring of the submissions, as columns (NaN: a metric left out)."""

    ids: Sequence[str]
    task_ids: Sequence[str]
    tools: Sequence[str | None]
    overall: np.ndarray
    ranks: np.ndarray
    metrics: dict[str, np.ndarray]
    """Dimensions first (in :data:`DIMENSIONS` order), then composite parts."""

    @classmethod
    def of(cls, evaluations: Sequence[Evaluation] | Side) -> Side:
        """Read a batch's columns directly; build them from evaluations otherwise (the
        per-record path: workspaces, or a component without a batch form)."""
        if isinstance(evaluations, Side):
            return evaluations
        if isinstance(evaluations, EvaluationBatch):
            table = evaluations.columns()
            scores = {d: np.asarray(table[f"{d}_score"]) for d in DIMENSIONS if f"{d}_score" in table}
            return cls(
                table["submission_id"],
                table["task_id"],
                table["tool"],
                np.asarray(table["overall_score"], dtype=float),
                np.asarray(table["overall_ranking"]),
                {**scores, **{p: np.asarray(v) for p, v in table["metric_scores"].items()}},
            )
        names = [
            *(d for d in DIMENSIONS if any(d in e.scores for e in evaluations)),
            *dict.fromkeys(p for e in evaluations for p in e.metric_scores),
        ]
        return cls(
            [e.submission_id for e in evaluations],
            [e.task_id for e in evaluations],
            [e.tool for e in evaluations],
            np.array([e.overall_score for e in evaluations], dtype=float),
            np.array([e.overall_ranking or 0 for e in evaluations]),
            {
                n: np.array([e.scores.get(n, e.metric_scores.get(n, math.nan)) for e in evaluations], dtype=float)
                for n in names
            },
        )

    @classmethod
    def concat(cls, sides: Sequence[Side]) -> Side:
        """The sides' rows one after another; a metric some of them lack is NaN in their rows."""
        names = list(dict.fromkeys(n for side in sides for n in side.metrics))
        names = [*(d for d in DIMENSIONS if d in names), *(n for n in names if n not in DIMENSIONS)]

        def column(side: Side, name: str) -> np.ndarray:
            return side.metrics[name] if name in side.metrics else np.full(len(side.ids), math.nan)

        return cls(
            [i for side in sides for i in side.ids],
            [t for side in sides for t in side.task_ids],
            [t for side in sides for t in side.tools],
            np.concatenate([side.overall for side in sides]) if sides else np.empty(0),
            np.concatenate([side.ranks for side in sides]) if sides else np.empty(0, dtype=int),
            {n: np.concatenate([column(side, n) for side in sides]) for n in names},
        )


class SubmissionDeltas(Sequence[dict[str, Any]]):
    """Per submission, as a dict built on access: ``submission_id``, ``task_id``, ``tool``,
    ``score_a``, ``score_b``, ``delta`` (rounded to 2 places), ``rank_a``, ``rank_b``,
    ``rank_change`` (positive: moved up under B) and ``metric_deltas`` (each dimension and
    composite part scored under both, rounded to 2 places).

    :meth:`column` gives any of them (but ``metric_deltas``) as an array, and
    :attr:`metric_deltas` each metric's deltas (NaN where either scoring left it out).
    """

    def __init__(self, a: Side, b: Side) -> None:
        self._a = a
        self._columns: dict[str, Any] = {
            "score_a": a.overall,
            "score_b": b.overall,
            "delta": round_exact(b.overall - a.overall, 2),
            "rank_a": a.ranks.astype(np.int64),
            "rank_b": b.ranks.astype(np.int64),
            "rank_change": a.ranks.astype(np.int64) - b.ranks.astype(np.int64),
        }
        #: Metric name to its per-submission deltas, for the metrics both scorings have.
        self.metric_deltas: dict[str, np.ndarray] = {
            name: round_exact(b.metrics[name] - values, 2) for name, values in a.metrics.items() if name in b.metrics
        }

    def __len__(self) -> int:
        return len(self._a.ids)

    def column(self, name: str) -> Any:
        """``submission_id``, ``task_id`` and ``tool`` as given; the figures as arrays."""
        if name in ("submission_id", "task_id", "tool"):
            return {"submission_id": self._a.ids, "task_id": self._a.task_ids, "tool": self._a.tools}[name]
        return self._columns[name]

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        c = self._columns
        return {
            "submission_id": str(self._a.ids[index]),
            "task_id": str(self._a.task_ids[index]),
            "tool": self._a.tools[index],
            "score_a": float(c["score_a"][index]),
            "score_b": float(c["score_b"][index]),
            "delta": float(c["delta"][index]),
            "rank_a": int(c["rank_a"][index]),
            "rank_b": int(c["rank_b"][index]),
            "rank_change": int(c["rank_change"][index]),
            "metric_deltas": {
                name: float(values[index])
                for name, values in self.metric_deltas.items()
                if values[index] == values[index]
            },
        }

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self[i] for i in range(len(self)))

    def jsonable(self) -> list[dict[str, Any]]:
        """Every row as :meth:`__getitem__` gives it, NaN figures as ``None``: read a column at a
        time (a row at a time, 300,000 rows took seconds of indexing and type checks)."""
        c = self._columns

        def floats(values: np.ndarray) -> list[float | None]:
            return [None if v != v else v for v in values.tolist()]

        metrics = {name: values.tolist() for name, values in self.metric_deltas.items()}
        names = list(metrics)
        columns = zip(
            map(str, self._a.ids), map(str, self._a.task_ids), self._a.tools,
            floats(c["score_a"]), floats(c["score_b"]), floats(c["delta"]),
            c["rank_a"].tolist(), c["rank_b"].tolist(), c["rank_change"].tolist(),
            zip(*metrics.values(), strict=True) if metrics else iter(lambda: (), None),
            strict=False,
        )  # fmt: skip
        return [
            {
                "submission_id": sid, "task_id": tid, "tool": tool, "score_a": sa, "score_b": sb, "delta": d,
                "rank_a": ra, "rank_b": rb, "rank_change": rc,
                "metric_deltas": {n: v for n, v in zip(names, values, strict=True) if v == v},
            }
            for sid, tid, tool, sa, sb, d, ra, rb, rc, values in columns
        ]  # fmt: skip

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(x == y for x, y in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def movers(self, count: int, tied_tasks: np.ndarray | None = None) -> tuple[dict[str, Any], ...]:
        """The ``count`` rows that moved most: largest rank change, then largest score change,
        then by id; rows that did not move at all are not listed, nor rows of ``tied_tasks``
        (a mask of rows whose task ties every run under both scorings: nothing there moved
        relative to anything)."""
        change, delta = np.abs(self._columns["rank_change"]), np.abs(self._columns["delta"])
        moving = (change != 0) | (delta != 0)
        if tied_tasks is not None:
            moving &= ~tied_tasks
        moved = np.flatnonzero(moving)
        if count <= 0 or len(moved) == 0:
            return ()
        order = moved[np.lexsort((-delta[moved], -change[moved]))]
        # Rows tied with the last one listed on both keys are ordered by id: take them all.
        last = order[min(count, len(order)) - 1]
        cut = np.flatnonzero((change[order] == change[last]) & (delta[order] == delta[last]))[-1] + 1
        chosen = sorted(order[:cut].tolist(), key=lambda i: (-int(change[i]), -float(delta[i]), str(self._a.ids[i])))
        return tuple(self[i] for i in chosen[:count])


def top_k_ids(scores: np.ndarray, ids: Sequence[Any], k: int) -> set[Any]:
    """The ids of the ``k`` best scores, ties broken by id; the k-th best score found by a partial
    sort, then only the rows at or above it sorted."""
    if k >= len(scores):
        return set(ids)
    threshold = np.partition(scores, len(scores) - k)[len(scores) - k]
    candidates = np.flatnonzero(scores >= threshold).tolist()
    return {ids[i] for i in sorted(candidates, key=lambda i: (-scores[i], ids[i]))[:k]}


class GroupMeans:
    """Per group, the mean over tasks of its per-task mean of a column (NaN values left out), as
    the leaderboard's default ``task_mean`` takes it: each task counts once. Only the (group,
    task) cells that hold runs are kept: a ``groups x tasks`` matrix of 300,000 groups (runs
    without a model, each a group of its own) by 1,000 tasks took 10 GB."""

    def __init__(self, codes: np.ndarray, count: int, task_codes: np.ndarray) -> None:
        tasks = int(task_codes.max()) + 1 if len(task_codes) else 0
        cells, self._rows_cell = np.unique(np.asarray(codes, dtype=np.int64) * tasks + task_codes, return_inverse=True)
        self._starts = np.searchsorted(cells // max(tasks, 1), np.arange(count + 1)).tolist()
        self._cells = len(cells)
        self.count = count

    def of(self, values: np.ndarray) -> list[float]:
        """Per group, the exactly rounded mean (``math.fsum``) of its per-task means (NaN when
        it has no value)."""
        means = cell_means(self._rows_cell.ravel(), values, (1, self._cells))[0]
        return [measured_mean(means[s:e]) for s, e in itertools.pairwise(self._starts)]
