"""Vectorised batch scoring: many submissions as columns, exactly the per-record numbers.

A metric may offer ``score_batch(batch) -> ndarray`` next to ``score``; a criterion checker
``check_batch(batch, criterion, task) -> CheckColumn``; a difficulty adjuster
``adjust_batch(scores) -> ndarray``. The engine uses the batch path when every metric and
checker in use offers one (adjusters fall back to a loop), and the per-record path otherwise.

Exactness: each batch form performs the same floating-point operations, in the same order, as
its per-record form (IEEE-754 gives the same result for each), NaN marks "not measured", and
rounding goes through :func:`~arena_core.engine.rounding.round_exact`, which agrees with Python's ``round`` everywhere.
Results come back as an :class:`EvaluationBatch`: columns for callers holding arrays, and a
sequence of :class:`~arena_core.model.records.Evaluation` built on demand for everyone else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from attrs import frozen

from arena_core.engine.columns import Columns, all_measured, factorize
from arena_core.engine.composite import WeightedSum
from arena_core.engine.ordered import split_by_code
from arena_core.engine.telemetry import Guarded, missing_error
from arena_core.model.errors import PluginError
from arena_core.model.records import Baseline, SuccessCriterion, Task

#: Criterion status codes used in :class:`CheckColumn`.
STATUSES = ("failed", "passed", "not_checkable", "error")


@frozen
class CheckColumn:
    """A criterion checker's verdicts on many rows."""

    credit: np.ndarray
    """Share of the criterion earned per row, 0 to 1."""
    status: np.ndarray
    """Per row, an index into :data:`STATUSES`."""
    reason: Callable[[int], str] = lambda row: ""
    """The reason for row ``row`` (only asked for rows that did not pass)."""
    reason_by: np.ndarray | None = None
    """Optional: rows with equal values here have equal reasons, so a writer asks ``reason``
    once per distinct value (a pass rate, say) instead of once per row. ``None``: per row."""

    @classmethod
    def of(cls, passed: np.ndarray) -> CheckColumn:
        """Pass/fail verdicts without partial credit or reasons."""
        return cls(passed.astype(float), passed.astype(np.int8), reason_by=np.zeros(len(passed), dtype=np.int8))


class Recorder:
    """What scoring notes beside the numbers: filled metrics and criterion verdicts."""

    def __init__(self) -> None:
        self.filled: list[tuple[str, str, np.ndarray]] = []  # (slot, policy, global row mask), traversal order
        self.criteria: dict[int, tuple[np.ndarray, list[tuple[SuccessCriterion, CheckColumn]]]] = {}
        self._last = -1  # the entry the block being scored noted last

    def begin_block(self) -> None:
        """The rows scored next are others: their notes join the entries earlier rows made."""
        self._last = -1

    def mask(self, slot: str, policy: str, size: int) -> np.ndarray:
        """The row mask of the entry for ``slot`` filled by ``policy``: the first one with them
        after the entry this block noted last, else a new one at the end. Each row then finds
        its entries in the order its block noted them, however many blocks there are, and
        blocks scored alike share their entries."""
        for place in range(self._last + 1, len(self.filled)):
            if self.filled[place][0] == slot and self.filled[place][1] == policy:
                self._last = place
                return self.filled[place][2]
        mask = np.zeros(size, dtype=bool)
        self.filled.append((slot, policy, mask))
        self._last = len(self.filled) - 1
        return mask


class WeightedTotal:
    """A weighted sum of scores some rows may lack (NaN), with the weights of the scores each
    row has and of those it lacks kept beside: what a composite and the overall score are. A
    score every row has is added plainly, its weight kept as a number: the same operations, row
    for row, as adding it under a mask."""

    def __init__(self, size: int) -> None:
        self.total = np.zeros(size)
        self.kept: float | np.ndarray = 0.0
        """Per row, the weight of the scores it has."""
        self.dropped: float | np.ndarray = 0.0
        """Per row, the weight of the scores it lacks (still a number: no row lacked one)."""
        self.complete = 0
        """How many of the scores added every row has."""
        self._partly = np.zeros(size, dtype=np.int64)  # per row, how many of the others it has

    def add(self, values: np.ndarray, weight: float | np.ndarray) -> np.ndarray | None:
        """``values`` times ``weight`` added; the rows that have a value, ``None`` when all do."""
        if all_measured(values):
            self.complete += 1
            self.total = self.total + values * weight
            self.kept = self.kept + weight
            return None
        measured: np.ndarray = ~np.isnan(values)
        self.total = self.total + np.where(measured, values * weight, 0.0)
        self.kept = self.kept + np.where(measured, weight, 0.0)
        self.dropped = self.dropped + np.where(measured, 0.0, weight)
        self._partly += measured
        return measured

    def measured(self) -> np.ndarray:
        """Per row, how many of the scores added it has."""
        counted: np.ndarray = self._partly + self.complete
        return counted


class Batch:
    """The rows of one scoring pass, as columns, with each row's baseline figures.

    Metrics' ``score_batch`` and checkers' ``check_batch`` receive one.
    """

    def __init__(
        self,
        columns: Columns,
        rows: np.ndarray,
        baselines: Mapping[str, np.ndarray],
        tasks: Sequence[Task],
        task_codes: np.ndarray,
        recorder: Recorder,
        baseline_list: Sequence[Baseline] = (),
        baseline_codes: np.ndarray | None = None,
    ) -> None:
        self._columns = columns
        self.rows = rows
        """Global row numbers of this batch's rows."""
        first = int(rows[0]) if len(rows) else 0
        self._span = slice(first, first + len(rows)) if len(rows) and int(rows[-1]) - first == len(rows) - 1 else None
        """The rows as a slice when they are consecutive (they ascend): columns are then read as
        views, without a copy, each block of rows as the cache holds it."""
        self._baselines = baselines
        """Figure to its value in each baseline of ``baseline_list`` (indexed by ``baseline_codes``):
        expanded to rows only when a metric asks, a batch's rows at a time."""
        self._row_baselines: np.ndarray | None = None
        self._tasks = tasks
        self._task_codes = task_codes
        self._recorder = recorder
        self._baseline_list = baseline_list
        self._baseline_codes = baseline_codes
        self.size = len(rows)
        self._assumed: dict[str, np.ndarray] = {}

    def column(self, field: str) -> np.ndarray:
        """A numeric submission field for these rows (NaN where not given); read-only when the
        rows are consecutive (a view of the submissions' column): compute new arrays from it."""
        assumed = self._assumed.get(field)
        if assumed is not None:
            return assumed
        return self._take(self._columns.numeric[field])

    def _take(self, column: np.ndarray) -> np.ndarray:
        """``column`` at these rows: a read-only view when they are consecutive."""
        if self._span is None:
            taken: np.ndarray = column[self.rows]
            return taken
        view = column[self._span]
        view.flags.writeable = False
        return view

    def with_value(self, field: str, value: float, local: np.ndarray) -> Batch:
        """This batch with ``field`` taken as ``value`` on the rows of ``local`` (a policy's
        assumption, such as ``count_as_one``); the submissions' columns are not changed."""
        batch = self.subset(np.arange(self.size))
        batch._assumed = {**self._assumed, field: np.where(local, value, self.column(field))}
        return batch

    def baseline(self, field: str) -> np.ndarray:
        """A baseline figure, per row (each row's own task baseline)."""
        if self._row_baselines is None:
            self._row_baselines = self._take(self._baseline_codes)  # type: ignore[arg-type]
        values: np.ndarray = self._baselines[field][self._row_baselines]
        return values

    def baseline_groups(self) -> Iterator[tuple[Baseline, np.ndarray]]:
        """Each distinct baseline of these rows with its local row positions (for metrics that
        need more than per-row figures, such as :attr:`Baseline.samples`)."""
        if self._baseline_codes is None:
            raise RuntimeError("this batch was built without its baselines")
        for code, local in split_by_code(self._take(self._baseline_codes)):
            yield self._baseline_list[code], local

    def success(self) -> np.ndarray:
        return self._take(self._columns.success)

    def files_created(self) -> list[Sequence[str]]:
        files = self._columns.files_created
        return [files[r] for r in self.rows]

    def has_file(self, path: str) -> np.ndarray:
        """Per row, whether ``path`` is among its ``files_created`` (looked up in an index of the
        distinct lists)."""
        codes, distinct = self._columns.file_sets()
        holding = np.zeros(len(distinct), dtype=bool)
        holding[self._columns.lists_with(path)] = True
        found: np.ndarray = holding[self._take(codes)]
        return found

    def pass_rate(self) -> np.ndarray:
        """Reported pass rate per row, as ``Submission.pass_rate`` (NaN when not reported)."""
        passed, total = self.column("tests_passed"), self.column("tests_total")
        if all_measured(total, zero_missing=True):  # every row ran tests (a count given with its total)
            rate: np.ndarray = passed / total
            return rate
        with np.errstate(all="ignore"):
            return np.where(total > 0, passed / total, np.where(total == 0, np.nan, self.column("correctness")))

    def ids(self, local: np.ndarray) -> list[str]:
        return [str(self._columns.ids[self.rows[i]]) for i in local]

    def tasks(self) -> Iterator[tuple[Task, np.ndarray]]:
        """Each task of these rows with its local row positions."""
        for code, local in split_by_code(self._take(self._task_codes)):
            yield self._tasks[code], local

    def task_codes(self) -> np.ndarray:
        """Per row, the index of its task in the batch's task list."""
        return self._take(self._task_codes)

    def task_groups(self, key: Callable[[Task], Any]) -> Iterator[tuple[list[Task], np.ndarray]]:
        """The tasks of these rows gathered by ``key`` (tasks with equal keys together; a key of
        ``None`` keeps a task alone), each group with its local row positions, ascending; groups
        in the order of their first task. A hundred thousand tasks of ten rows then cost one
        call per group, not per task; keys are compared once per distinct key object (tasks of
        one kind share theirs), not once per task."""
        codes = self._take(self._task_codes)
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if len(codes) else np.zeros(0, np.int64)
        runs = codes[starts]  # each run of rows of one task, by its task
        present = np.unique(runs)  # ascending
        tasks = list(map(self._tasks.__getitem__, present.tolist()))
        keys = list(map(key, tasks))
        idents = list(map(id, keys))  # the keys stay alive in ``keys``
        object_codes, distinct = factorize(idents)
        objects = dict(zip(idents, keys, strict=True))
        found: dict[Any, int] = {}
        shared = [-1 if objects[i] is None else found.setdefault(objects[i], len(found)) for i in distinct]
        task_group = np.array(shared, dtype=np.int64)[object_codes]
        alone = np.flatnonzero(task_group < 0)
        task_group[alone] = len(found) + np.arange(len(alone))
        # Number the groups in the order of their first task.
        _, first, inverse = np.unique(task_group, return_index=True, return_inverse=True)
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        task_group = rank[inverse.reshape(-1)]
        members: list[list[Task]] = [[] for _ in range(len(first))]
        for task, group in zip(tasks, task_group.tolist(), strict=True):
            members[group].append(task)
        if len(runs) > 4 * len(first) + 64:  # tasks in pieces: their rows found by a sort
            group_of = np.zeros(len(self._tasks), dtype=np.int64)
            group_of[present] = task_group
            for group, local in split_by_code(group_of[codes]):
                yield members[group], local
            return
        # Few runs (each task's rows together, as blocks hold them): a group's rows are its runs'.
        run_groups = task_group[np.searchsorted(present, runs)]
        ends = np.r_[starts[1:], len(codes)]
        for group in range(len(first)):
            mine = np.flatnonzero(run_groups == group)
            pieces = [np.arange(starts[k], ends[k]) for k in mine.tolist()]
            yield members[group], pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def subset(self, local: np.ndarray) -> Batch:
        batch = Batch(
            self._columns,
            self.rows[local],
            self._baselines,
            self._tasks,
            self._task_codes,
            self._recorder,
            self._baseline_list,
            self._baseline_codes,
        )
        batch._assumed = {field: values[local] for field, values in self._assumed.items()}
        return batch

    def record_criteria(
        self, tasks: Sequence[Task], local: np.ndarray, columns: list[tuple[SuccessCriterion, CheckColumn]]
    ) -> None:
        """Keep the verdicts of the rows ``local`` of ``tasks`` (which share their criteria):
        one entry, shared by the tasks."""
        self._recorder.criteria.update(dict.fromkeys(map(id, tasks), (self.rows[local], columns)))

    def note_filled(self, slot: str, policy: str, local_mask: np.ndarray) -> np.ndarray | None:
        """Record that ``slot`` was filled in or left out by ``policy`` on the rows of
        ``local_mask``; the global row mask recorded (``None`` when there are none)."""
        if not local_mask.any():
            return None
        mask = self._recorder.mask(slot, policy, self._columns.size)
        mask[self.rows[local_mask]] = True
        return mask


def batch_blocker(metric: Any, tasks: Sequence[Task]) -> str | None:
    """Why ``metric`` (or a part of it) cannot score ``tasks`` by its batch form, or ``None`` when
    it can. Only what these tasks use counts: a metric may ask ``batch_blocker(tasks)`` of its
    own (the correctness metric names a checker the tasks use that has no ``check_batch``)."""
    if isinstance(metric, Guarded):
        return batch_blocker(metric.inner, tasks)
    if isinstance(metric, WeightedSum):
        for _, part, _ in metric.bound:
            reason = batch_blocker(part, tasks)
            if reason is not None:
                return reason
        return None
    if not hasattr(metric, "score_batch"):
        return f"metric {metric.name!r} has no batch form (score_batch)"
    own = getattr(metric, "batch_blocker", None)
    return own(tasks) if own is not None else None


def score_batch(metric: Any, batch: Batch, slot: str, parts: dict[str, np.ndarray]) -> np.ndarray:
    """Scores of ``metric`` for the batch's rows (NaN: left out), as the per-record path would.

    ``parts`` collects the scores of composite parts (NaN where a part was left out).
    """
    if isinstance(metric, Guarded):
        decided = np.zeros(batch.size, dtype=bool)  # rows a policy scored or left out
        overrides = np.full(batch.size, np.nan)
        for field, policy, zero_missing in metric.checks:
            values = batch.column(field)
            if policy != "comparable" and all_measured(values, zero_missing):
                continue  # nothing for the policy to decide
            missing = np.isnan(values) | ((values == 0) if zero_missing else False)
            if policy == "comparable":  # left out for every row whose baseline group has a row without it
                for baseline, local in batch.baseline_groups():
                    if field in baseline.partial:
                        missing[local] = True
                policy = "reweight"
            if missing.any() and (missing := missing & ~decided).any():
                if policy == "error":
                    first = batch.ids(np.flatnonzero(missing)[:1])[0]
                    raise missing_error(first, {field: int(missing.sum())}, batch.size, {field: [metric.inner.name]})
                if policy == "count_as_one":
                    batch.note_filled(slot, "count_as_one", missing)
                    batch = batch.with_value(field, 1.0, missing)
                    continue
                if policy == "neutral":
                    overrides[missing] = 50.0
                    batch.note_filled(slot, "neutral", missing)
                decided |= missing
        inner = score_batch(metric.inner, batch, slot, parts)
        return np.where(decided, overrides, inner) if decided.any() else inner
    if isinstance(metric, WeightedSum):
        summed = WeightedTotal(batch.size)
        noted = []
        for part_slot, part, weight in metric.bound:
            values = score_batch(part, batch, part_slot, parts)
            parts[part_slot] = scatter(parts.get(part_slot), batch, values)
            measured = summed.add(values, weight)
            if measured is not None:
                noted.append(batch.note_filled(part_slot, "reweight", ~measured))
        if summed.complete == len(metric.bound):  # every part measured on every row
            return summed.total
        any_measured = summed.measured() > 0
        for mask in noted:  # a composite left out whole is noted as itself alone, as per record
            if mask is not None:
                mask[batch.rows[~any_measured]] = False
        with np.errstate(all="ignore"):
            result = np.where(summed.dropped != 0, summed.total / summed.kept, summed.total)
        return np.where(any_measured, result, np.nan)
    return np.asarray(metric.score_batch(batch), dtype=float)


def scatter(existing: np.ndarray | None, batch: Batch, values: np.ndarray, *, everywhere: bool = False) -> np.ndarray:
    """``values`` of the batch's rows written into ``existing`` (a new column when ``None``: of
    NaN, or left unset when the caller writes every row, ``everywhere``); a slice of it when
    the rows are consecutive."""
    if existing is None:
        existing = np.empty(batch._columns.size) if everywhere else np.full(batch._columns.size, np.nan)
    existing[batch.rows if batch._span is None else batch._span] = values
    return existing


def check_range(values: np.ndarray, metric: Any, batch: Batch, owner: str) -> None:
    """Refuse a metric's score outside 0-100 (NaN, not measured, passes), naming the first row."""
    if not len(values) or (np.fmin.reduce(values) >= 0.0 and np.fmax.reduce(values) <= 100.0):
        return  # two reductions, which skip NaN, clear the usual case; the rows are looked for below
    with np.errstate(invalid="ignore"):
        bad = ~np.isnan(values) & ~((values >= 0.0) & (values <= 100.0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise PluginError(
            f"metric {metric.name!r} ({owner}) scored submission {batch.ids(np.array([row]))[0]!r} "
            f"{float(values[row])!r}; expected a score from 0 to 100"
        )
