"""Vectorised batch scoring: many submissions as columns, exactly the per-record numbers.

A metric may offer ``score_batch(batch) -> ndarray`` next to ``score``; a criterion checker
``check_batch(batch, criterion, task) -> CheckColumn``; a difficulty adjuster
``adjust_batch(scores) -> ndarray``. The engine uses the batch path when every metric and
checker in use offers one (adjusters fall back to a loop), and the per-record path otherwise.

Exactness: each batch form performs the same floating-point operations, in the same order, as
its per-record form (IEEE-754 gives the same result for each), NaN marks "not measured", and
rounding goes through :func:`~arena_core.rounding.round_exact`, which agrees with Python's ``round`` everywhere.
Results come back as an :class:`EvaluationBatch`: columns for callers holding arrays, and a
sequence of :class:`~arena_core.models.Evaluation` built on demand for everyone else.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import frozen

from arena_core.errors import PluginError, ValidationError
from arena_core.models import Baseline, CriterionResult, Evaluation, Submission, SuccessCriterion, Task
from arena_core.rounding import round_exact

if TYPE_CHECKING:
    from arena_core.scoring import Scorer

__all__ = [
    "NUMERIC_FIELDS", "STATUSES", "Batch", "CheckColumn", "Columns", "EvaluationBatch", "factorize",
    "factorize_objects", "split_by_code",
]

#: Submission fields held as float64 columns; NaN means "not given".
NUMERIC_FIELDS = (
    "total_tokens", "tool_calls", "iterations", "execution_time", "estimated_cost",
    "correctness", "tests_passed", "tests_total",
)
_WHOLE = frozenset({"total_tokens", "tool_calls", "iterations", "tests_passed", "tests_total"})
#: Criterion status codes used in :class:`CheckColumn`.
STATUSES = ("failed", "passed", "not_checkable", "error")


def factorize(values: Sequence[Any]) -> tuple[np.ndarray, list[Any]]:
    """(code per element, distinct values in first-seen order), by hashing: O(n)."""
    distinct = list(dict.fromkeys(values))
    index = {v: k for k, v in enumerate(distinct)}
    return np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values)), distinct


def factorize_objects(objects: Sequence[Any]) -> tuple[np.ndarray, list[Any]]:
    """Like :func:`factorize`, by identity: for objects that are unhashable or costly to compare
    (baselines, weight profiles, adjusters), of which a batch holds a few shared instances."""
    index: dict[int, int] = {}
    codes = np.fromiter((index.setdefault(id(o), len(index)) for o in objects), dtype=np.int64, count=len(objects))
    return codes, list({id(o): o for o in objects}.values())


def order_within_groups(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """The permutation sorting rows by group, then by value: ``np.lexsort((values, groups))``,
    done as one sort of the values (ties need no order) and one stable sort of the group codes, which NumPy does by
    radix sort when the codes fit 16 bits (three times faster than ``lexsort`` on a million rows)."""
    if len(groups) == 0:
        return np.zeros(0, dtype=np.intp)
    by_value = np.argsort(values)
    narrow = groups.astype(np.uint16) if int(groups.max()) < 1 << 16 else groups
    return by_value[np.argsort(narrow[by_value], kind="stable")]


def split_by_code(codes: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """(code, positions having it) for each code present, positions ascending: one stable sort."""
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    ends = np.r_[starts[1:], len(codes)]
    for start, end in zip(starts, ends):
        yield int(sorted_codes[start]), order[start:end]


@frozen
class CheckColumn:
    """A criterion checker's verdicts on many rows."""

    credit: np.ndarray
    """Share of the criterion earned per row, 0 to 1."""
    status: np.ndarray
    """Per row, an index into :data:`STATUSES`."""
    reason: Callable[[int], str] = lambda row: ""
    """The reason for row ``row`` (only asked for rows that did not pass)."""

    @classmethod
    def of(cls, passed: np.ndarray) -> CheckColumn:
        """Pass/fail verdicts without partial credit or reasons."""
        return cls(passed.astype(float), passed.astype(np.int8))


class Columns:
    """Submissions as columns: ids, task ids, tool, model, numeric figures, success, files."""

    def __init__(
        self,
        ids: Sequence[str],
        task_ids: Sequence[str],
        numeric: Mapping[str, np.ndarray],
        *,
        tools: Sequence[str | None] | None = None,
        models: Sequence[str | None] | None = None,
        success: np.ndarray | None = None,
        files_created: Sequence[Sequence[str]] | None = None,
    ) -> None:
        self.size = len(ids)
        self.ids = ids
        self.task_ids = task_ids
        self.tools = tools if tools is not None else [None] * self.size
        self.models = models if models is not None else [None] * self.size
        self.numeric = {f: numeric.get(f, np.full(self.size, np.nan)) for f in NUMERIC_FIELDS}
        self.numeric["iterations"] = np.where(np.isnan(self.numeric["iterations"]), 1.0, self.numeric["iterations"])
        self.success = success if success is not None else np.ones(self.size, dtype=bool)
        self.files_created = files_created if files_created is not None else [()] * self.size
        self._file_codes: tuple[np.ndarray, list[Any]] | None = None

    def file_sets(self) -> tuple[np.ndarray, list[Any]]:
        """Rows' ``files_created`` as codes into the distinct lists (computed once)."""
        if self._file_codes is None:
            self._file_codes = factorize(list(map(tuple, self.files_created)))
        return self._file_codes

    @classmethod
    def from_submissions(cls, subs: Sequence[Submission]) -> Columns:
        def column(field: str) -> np.ndarray:
            return np.array([getattr(s, field) for s in subs], dtype=float)  # None becomes NaN

        return cls(
            [s.id for s in subs], [s.task_id for s in subs], {f: column(f) for f in NUMERIC_FIELDS},  # type: ignore[misc]
            tools=[s.tool for s in subs], models=[s.model for s in subs],
            success=np.array([s.success for s in subs], dtype=bool),
            files_created=[s.files_created for s in subs],
        )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Columns:
        """Columns from a mapping of field name to array-like (NumPy, Arrow, pandas, lists).

        :raises ValidationError: naming the first offending row by its id.
        """
        for required in ("id", "task_id"):
            if required not in data:
                raise ValidationError("columns", required, "a column of the same length as the others")
        ids = data["id"]
        n = len(ids)
        known = {"id", "task_id", "tool", "model", "success", "files_created", *NUMERIC_FIELDS}
        for name in data:
            if name in ("workspace", "workspace_ref"):
                raise ValidationError("columns", name, "no workspaces in columns: pass submissions with workspaces as records")
            if name not in known and name != "meta":
                raise ValidationError("columns", name, "a submission field")
        numeric: dict[str, np.ndarray] = {}
        for name in NUMERIC_FIELDS:
            if name not in data:
                continue
            try:
                values = np.asarray(data[name], dtype=float)
            except (TypeError, ValueError):
                raise ValidationError("columns", name, "numbers (NaN or None for missing)") from None
            if values.shape != (n,):
                raise ValidationError("columns", name, f"{n} values, like the id column", values.shape)
            minimum = 1.0 if name == "iterations" else 0.0
            with np.errstate(invalid="ignore"):
                bad = (values < minimum) | np.isinf(values)
                if name in _WHOLE:
                    bad |= np.isfinite(values) & (values != np.floor(values))
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                expected = f"a finite {'whole ' if name in _WHOLE else ''}number >= {minimum:g}"
                raise ValidationError(f"submission {ids[row]!r}", name, expected, float(values[row]))
            numeric[name] = values
        success = np.asarray(data["success"], dtype=bool) if "success" in data else None
        if len(data["task_id"]) != n:
            raise ValidationError("columns", "task_id", f"{n} values, like the id column", len(data["task_id"]))
        return cls(
            ids, data["task_id"], numeric,
            tools=data["tool"] if "tool" in data else None,
            models=data["model"] if "model" in data else None,
            success=success,
            files_created=data["files_created"] if "files_created" in data else None,
        )


class _Recorder:
    """What scoring notes beside the numbers: filled metrics and criterion verdicts."""

    def __init__(self) -> None:
        self.filled: list[tuple[str, str, np.ndarray]] = []  # (slot, policy, global row mask), traversal order
        self.criteria: dict[int, tuple[np.ndarray, list[tuple[SuccessCriterion, CheckColumn]]]] = {}


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
        recorder: _Recorder,
        baseline_list: Sequence[Baseline] = (),
        baseline_codes: np.ndarray | None = None,
    ) -> None:
        self._columns = columns
        self.rows = rows
        """Global row numbers of this batch's rows."""
        self._baselines = baselines
        self._tasks = tasks
        self._task_codes = task_codes
        self._recorder = recorder
        self._baseline_list = baseline_list
        self._baseline_codes = baseline_codes
        self.size = len(rows)

    def column(self, field: str) -> np.ndarray:
        """A numeric submission field for these rows (NaN where not given)."""
        return self._columns.numeric[field][self.rows]

    def baseline(self, field: str) -> np.ndarray:
        """A baseline figure, per row (each row's own task baseline)."""
        return self._baselines[field][self.rows]

    def baseline_groups(self) -> Iterator[tuple[Baseline, np.ndarray]]:
        """Each distinct baseline of these rows with its local row positions (for metrics that
        need more than per-row figures, such as :attr:`Baseline.samples`)."""
        if self._baseline_codes is None:
            raise RuntimeError("this batch was built without its baselines")
        for code, local in split_by_code(self._baseline_codes[self.rows]):
            yield self._baseline_list[code], local

    def success(self) -> np.ndarray:
        return self._columns.success[self.rows]

    def files_created(self) -> list[Sequence[str]]:
        files = self._columns.files_created
        return [files[r] for r in self.rows]

    def has_file(self, path: str) -> np.ndarray:
        """Per row, whether ``path`` is among its ``files_created`` (one test per distinct list)."""
        codes, distinct = self._columns.file_sets()
        return np.array([path in files for files in distinct], dtype=bool)[codes[self.rows]]

    def pass_rate(self) -> np.ndarray:
        """Reported pass rate per row, as ``Submission.pass_rate`` (NaN when not reported)."""
        passed, total, fraction = self.column("tests_passed"), self.column("tests_total"), self.column("correctness")
        with np.errstate(all="ignore"):
            return np.where(total > 0, passed / total, np.where(total == 0, np.nan, fraction))

    def ids(self, local: np.ndarray) -> list[str]:
        return [str(self._columns.ids[self.rows[i]]) for i in local]

    def tasks(self) -> Iterator[tuple[Task, np.ndarray]]:
        """Each task of these rows with its local row positions."""
        for code, local in split_by_code(self._task_codes[self.rows]):
            yield self._tasks[code], local

    def subset(self, local: np.ndarray) -> Batch:
        return Batch(self._columns, self.rows[local], self._baselines, self._tasks, self._task_codes, self._recorder,
                     self._baseline_list, self._baseline_codes)

    def record_criteria(self, task: Task, local: np.ndarray, columns: list[tuple[SuccessCriterion, CheckColumn]]) -> None:
        self._recorder.criteria[id(task)] = (self.rows[local], columns)

    def note_filled(self, slot: str, policy: str, local_mask: np.ndarray) -> None:
        if local_mask.any():
            mask = np.zeros(self._columns.size, dtype=bool)
            mask[self.rows[local_mask]] = True
            self._recorder.filled.append((slot, policy, mask))


def supports_batch(metric: Any) -> bool:
    """True when ``metric`` (and every part of it) has a batch form."""
    from arena_core.composite import WeightedSum
    from arena_core.telemetry import Guarded

    if isinstance(metric, Guarded):
        return supports_batch(metric.inner)
    if isinstance(metric, WeightedSum):
        return all(supports_batch(m) for _, m, _ in metric.bound)
    check = getattr(metric, "supports_batch", None)
    return hasattr(metric, "score_batch") and (check is None or check())


def score_batch(metric: Any, batch: Batch, slot: str, parts: dict[str, np.ndarray]) -> np.ndarray:
    """Scores of ``metric`` for the batch's rows (NaN: left out), as the per-record path would.

    ``parts`` collects the scores of composite parts (NaN where a part was left out).
    """
    from arena_core.composite import WeightedSum
    from arena_core.telemetry import Guarded

    if isinstance(metric, Guarded):
        decided = np.zeros(batch.size, dtype=bool)
        overrides = np.full(batch.size, np.nan)
        for field, policy, zero_missing in metric.checks:
            values = batch.column(field)
            missing = (np.isnan(values) | ((values == 0) if zero_missing else False)) & ~decided
            if missing.any():
                if policy == "error":
                    first = batch.ids(np.flatnonzero(missing)[:1])[0]
                    raise ValidationError(
                        f"submission {first!r}", field,
                        f"a value (the {metric.inner.name!r} metric needs it; set missing.{field} to "
                        "'neutral' or 'reweight' to score without it)",
                    )
                if policy == "neutral":
                    overrides[missing] = 50.0
                    batch.note_filled(slot, "neutral", missing)
                decided |= missing
        inner = score_batch(metric.inner, batch, slot, parts)
        return np.where(decided, overrides, inner)
    if isinstance(metric, WeightedSum):
        total = np.zeros(batch.size)
        kept = np.zeros(batch.size)
        dropped = np.zeros(batch.size)
        any_measured = np.zeros(batch.size, dtype=bool)
        for part_slot, part, weight in metric.bound:
            values = score_batch(part, batch, part_slot, parts)
            measured = ~np.isnan(values)
            batch.note_filled(part_slot, "reweight", ~measured)
            parts[part_slot] = _scatter(parts.get(part_slot), batch, values)
            total = total + np.where(measured, values * weight, 0.0)
            kept = kept + np.where(measured, weight, 0.0)
            dropped = dropped + np.where(measured, 0.0, weight)
            any_measured |= measured
        with np.errstate(all="ignore"):
            result = np.where(dropped != 0, total / kept, total)
        return np.where(any_measured, result, np.nan)
    return np.asarray(metric.score_batch(batch), dtype=float)


def _scatter(existing: np.ndarray | None, batch: Batch, values: np.ndarray) -> np.ndarray:
    out = existing if existing is not None else np.full(batch._columns.size, np.nan)
    out[batch.rows] = values
    return out


class EvaluationBatch(Sequence[Evaluation]):
    """Evaluations of many submissions, held as columns; indexing builds an :class:`Evaluation`.

    ``columns()`` gives the arrays (scores, ranks, percentiles) without building objects.
    """

    def __init__(self, **state: Any) -> None:
        self.__dict__.update(state)

    def __len__(self) -> int:
        return self.size  # type: ignore[attr-defined,no-any-return]

    def __getitem__(self, index):  # type: ignore[no-untyped-def,override]
        if isinstance(index, slice):
            return [self._build(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._build(index)

    def columns(self) -> dict[str, Any]:
        """Column name to array: ids, tool, model, overall and dimension scores (NaN where left
        out), ranks; and ``metric_scores``, a mapping of each composite part (``token_efficiency``)
        to its scores."""
        out: dict[str, Any] = {
            "submission_id": self.ids, "task_id": self.task_ids,  # type: ignore[attr-defined]
            "tool": self.tools, "model": self.models,  # type: ignore[attr-defined]
            "overall_score": self.overall, "unadjusted_overall_score": self.unadjusted,  # type: ignore[attr-defined]
        }
        out.update({f"{d}_score": v for d, v in self.scores.items()})  # type: ignore[attr-defined]
        out["metric_scores"] = dict(self.parts)  # type: ignore[attr-defined]
        out.update({"overall_ranking": self.ranks, "percentile": self.percentiles, "provisional": self.provisional})  # type: ignore[attr-defined]
        return out

    def _build(self, i: int) -> Evaluation:
        s = self.__dict__
        code = s["task_codes"][i]
        profile = s["profiles"][code]
        present = [d for d in profile.weights if not math.isnan(s["raw_scores"][d][i])]
        if len(present) < len(profile.weights):
            kept = 0.0
            for d in present:
                kept += profile.weights[d]
            weights = {d: profile.weights[d] / kept for d in present}
        else:
            weights = profile.weights
        criteria: tuple[CriterionResult, ...] = ()
        task = s["task_list"][code]
        verdicts = s["criteria"].get(id(task))
        if verdicts is not None:
            rows, columns = verdicts
            local = int(np.searchsorted(rows, i))
            criteria = tuple(_verdict(criterion, column, local) for criterion, column in columns)
        adjuster = s["adjusters"][code]
        return Evaluation(
            submission_id=str(s["ids"][i]),
            task_id=str(s["task_ids"][i]),
            overall_score=float(s["overall"][i]),
            scores={d: float(s["scores"][d][i]) for d in present},
            weights=weights,
            weight_profile=profile.name,
            unadjusted_overall_score=float(s["unadjusted"][i]),
            evaluated_at=s["evaluated_at"],
            difficulty=adjuster.name if adjuster is not None else None,
            metric_scores={p: float(v[i]) for p, v in s["parts"].items() if not math.isnan(v[i])},
            criteria=criteria,
            tool=s["tools"][i],
            model=s["models"][i],
            overall_ranking=int(s["ranks"][i]),
            percentile=float(s["percentiles"][i]),
            provisional=bool(s["provisional"][i]),
            filled={slot: policy for slot, policy, mask in s["filled"] if mask[i]},
            provenance=s["provenance"],
        )


def _verdict(criterion: SuccessCriterion, column: CheckColumn, row: int) -> CriterionResult:
    status = STATUSES[int(column.status[row])]
    reason = "" if status == "passed" else column.reason(row)
    return CriterionResult(criterion.type, status, float(column.credit[row]), criterion.weight, reason)  # type: ignore[arg-type]


def competition_ranks_by_group(groups: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: its rank within its group (best first, ties share, 1 1 3) and its percentile
    (share of the group's scores strictly below, ×100, rounded to 1 place) in O(n log n)."""
    n = len(scores)
    if n == 0:
        return np.zeros(0, dtype=int), np.zeros(0)
    order = order_within_groups(scores, groups)
    g, v = groups[order], scores[order]
    index = np.arange(n)
    group_start = np.maximum.accumulate(np.where(np.r_[True, g[1:] != g[:-1]], index, 0))
    run_start = np.maximum.accumulate(np.where(np.r_[True, (g[1:] != g[:-1]) | (v[1:] != v[:-1])], index, 0))
    group_end = np.minimum.accumulate(np.where(np.r_[g[1:] != g[:-1], True], index, n)[::-1])[::-1]
    run_end = np.minimum.accumulate(np.where(np.r_[(g[1:] != g[:-1]) | (v[1:] != v[:-1]), True], index, n)[::-1])[::-1]
    ranks = np.empty(n, dtype=int)
    percentiles = np.empty(n)
    ranks[order] = group_end - run_end + 1
    percentiles[order] = (run_start - group_start) / (group_end - group_start + 1) * 100
    return ranks, round_exact(percentiles, 1)


def group_baselines(
    columns: Columns, groups: np.ndarray, count: int, defaults: Sequence[Baseline], task_ids: Sequence[str], stamp: str,
    samples: Sequence[str] = (),
) -> list[Baseline]:
    """The spec's baseline of each group of rows (``groups`` holds codes 0..count-1), as
    :func:`arena_core.baselines.compute_baseline` computes it (``samples`` too), with sorting
    done once per figure."""
    from arena_core.baselines import MIN_SUBMISSIONS

    sizes = np.bincount(groups, minlength=count)
    stats: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    q25 = q75 = np.full(count, np.nan)
    kept_samples: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for field, positive_only in (("total_tokens", False), ("tool_calls", False), ("execution_time", True),
                                 ("estimated_cost", True), ("iterations", False)):
        values = columns.numeric[field]
        keep = ~np.isnan(values)
        if positive_only:
            keep &= values > 0
        kept_values, kept_groups = values[keep], groups[keep]
        order = order_within_groups(kept_values, kept_groups)
        data = kept_values[order]
        bounds = np.searchsorted(kept_groups[order], np.arange(count + 1))
        start, stop = bounds[:-1], bounds[1:]
        length = stop - start
        present = length > 0
        safe = np.where(present, start, 0)
        last = np.where(present, stop - 1, 0)
        middle = safe + length // 2
        lower = np.where(length % 2 == 0, np.maximum(middle - 1, safe), middle)
        median = np.where(length % 2 == 1, data[middle.clip(max=len(data) - 1)] if len(data) else 0.0,
                          (data[lower.clip(max=len(data) - 1)] + data[middle.clip(max=len(data) - 1)]) / 2 if len(data) else 0.0)
        stats[field] = (present, median, data[safe] if len(data) else np.zeros(count),
                        data[last] if len(data) else np.zeros(count))
        if field == "total_tokens":
            q25, q75 = _quantiles(data, start, length)
        if field in samples:
            kept_samples[field] = (data, bounds)
    out = []
    for code in range(count):
        default = defaults[code]
        if sizes[code] < MIN_SUBMISSIONS:
            out.append(Baseline(**{**_fields(default), "task_id": task_ids[code], "submission_count": 0, "last_updated": stamp}))
            continue

        def pick(field: str, fallback: tuple[float, float, float]) -> tuple[float, float, float]:
            present, median, low, high = stats[field]
            return (float(median[code]), float(low[code]), float(high[code])) if present[code] else fallback

        tokens = pick("total_tokens", (default.median_tokens, default.min_tokens, default.max_tokens))
        calls = pick("tool_calls", (default.median_tool_calls, default.min_tool_calls, default.max_tool_calls))
        times = pick("execution_time", (300, 60, 1800))
        costs = pick("estimated_cost", (0.05, 0.01, 0.20))
        out.append(Baseline(
            median_tokens=tokens[0], min_tokens=tokens[1], max_tokens=tokens[2],
            median_tool_calls=calls[0], min_tool_calls=calls[1], max_tool_calls=calls[2],
            median_execution_time=times[0], min_execution_time=times[1], max_execution_time=times[2],
            median_cost=costs[0], min_cost=costs[1], max_cost=costs[2],
            median_iterations=float(stats["iterations"][1][code]),
            q25_tokens=None if np.isnan(q25[code]) else float(q25[code]),
            q75_tokens=None if np.isnan(q75[code]) else float(q75[code]),
            submission_count=int(sizes[code]), task_id=task_ids[code], last_updated=stamp,
            samples={f: tuple(data[bounds[code]:bounds[code + 1]].tolist()) for f, (data, bounds) in kept_samples.items()
                     if bounds[code + 1] > bounds[code]},
        ))
    return out


def _quantiles(data: np.ndarray, start: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group, ``statistics.quantiles(group, n=4)`` first and third values ('exclusive'
    method, the default) on sorted data; NaN for groups of fewer than 2 values."""
    out = []
    m = length + 1
    for i in (1, 3):
        j = np.clip(i * m // 4, 1, np.maximum(length - 1, 1))
        delta = (i * m - j * 4).astype(float)
        low = np.clip(start + j - 1, 0, max(len(data) - 1, 0))
        high = np.clip(start + j, 0, max(len(data) - 1, 0))
        values = (data[low] * (4 - delta) + data[high] * delta) / 4 if len(data) else np.zeros(len(start))
        out.append(np.where(length >= 2, values, np.nan))
    return out[0], out[1]


def _or_nan(value: float | None) -> float:
    return np.nan if value is None else float(value)


def _fields(baseline: Baseline) -> dict[str, Any]:
    return {a.name: getattr(baseline, a.name) for a in baseline.__attrs_attrs__}  # type: ignore[attr-defined]


def _check_range(values: np.ndarray, metric: Any, batch: Batch, owner: str) -> None:
    with np.errstate(invalid="ignore"):
        bad = ~np.isnan(values) & ~((values >= 0.0) & (values <= 100.0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise PluginError(
            f"metric {metric.name!r} ({owner}) scored submission {batch.ids(np.array([row]))[0]!r} "
            f"{float(values[row])!r}; expected a score from 0 to 100"
        )


def evaluate_columns(
    scorer: Scorer,
    columns: Columns,
    task_list: Sequence[Task],
    task_codes: np.ndarray,
    baselines: Sequence[Baseline],
    baseline_codes: np.ndarray,
    provisional_minimum: int,
    stamp: str,
) -> EvaluationBatch | None:
    """Score, rank and mark every row; ``None`` when some component in use has no batch form.

    :param task_codes: per row, the index of its task in ``task_list``.
    :param baseline_codes: per row, the index of its baseline in ``baselines``.
    """
    profiles = [scorer.profile_for(t) for t in task_list]
    adjusters = [scorer.adjuster_for(t) for t in task_list]
    for profile in {p.name: p for p in profiles}.values():
        if not all(supports_batch(scorer.metric(d)) for d in profile.weights):
            return None
    baseline_fields = {a.name for a in Baseline.__attrs_attrs__ if a.name not in ("task_id", "last_updated", "samples")}  # type: ignore[attr-defined]
    per_row_baseline = {
        f: np.array([_or_nan(getattr(b, f)) for b in baselines])[baseline_codes] for f in baseline_fields
    }
    recorder = _Recorder()
    n = columns.size
    overall = np.zeros(n)
    raw_scores: dict[str, np.ndarray] = {}
    parts: dict[str, np.ndarray] = {}
    profile_of_task, distinct_profiles = factorize_objects(profiles)
    for code, rows in split_by_code(profile_of_task[task_codes]):
        profile = distinct_profiles[code]
        batch = Batch(columns, rows, per_row_baseline, task_list, task_codes, recorder, baselines, baseline_codes)
        total = np.zeros(len(rows))
        kept = np.zeros(len(rows))
        measured_count = np.zeros(len(rows), dtype=np.int64)
        for dimension, weight in profile.weights.items():
            metric = scorer.metric(dimension)
            try:
                values = score_batch(metric, batch, dimension, parts)
            except (ValidationError, PluginError):
                raise
            except Exception as exc:
                raise PluginError(f"metric {metric.name!r} ({scorer._owner(metric)}) failed in its batch form: {exc!r}") from exc
            _check_range(values, metric, batch, scorer._owner(metric))
            measured = ~np.isnan(values)
            batch.note_filled(dimension, "reweight", ~measured)
            raw_scores[dimension] = _scatter(raw_scores.get(dimension), batch, values)
            total = total + np.where(measured, values * weight, 0.0)
            kept = kept + np.where(measured, weight, 0.0)
            measured_count += measured
        if (measured_count == 0).any():
            row = batch.ids(np.flatnonzero(measured_count == 0)[:1])[0]
            raise ValidationError(f"submission {row!r}", "(record)", "at least one measured metric; every metric was left out")
        with np.errstate(all="ignore"):
            overall[rows] = np.where(measured_count < len(profile.weights), total / kept, total)
    adjusted = overall.copy()
    adjuster_codes, distinct_adjusters = factorize_objects(adjusters)
    for code, rows in split_by_code(adjuster_codes[task_codes] if n else adjuster_codes[:0]):
        adjuster = distinct_adjusters[code]
        if adjuster is None:  # tasks without a difficulty
            continue
        batch_form = getattr(adjuster, "adjust_batch", None)
        adjusted[rows] = batch_form(overall[rows]) if batch_form else [adjuster.adjust(float(v)) for v in overall[rows]]
    overall_rounded = round_exact(adjusted, 2)
    ranks, percentiles = competition_ranks_by_group(task_codes, overall_rounded)
    tool_codes, distinct_tools = factorize(columns.tools)
    pair = task_codes * max(len(distinct_tools), 1) + tool_codes
    counts = np.bincount(pair)[pair] if n else pair
    return EvaluationBatch(
        size=n, ids=columns.ids, task_ids=columns.task_ids, tools=columns.tools, models=columns.models,
        overall=overall_rounded, unadjusted=round_exact(overall, 2),
        raw_scores=raw_scores, scores={d: round_exact(v, 2) for d, v in raw_scores.items()},
        parts={p: round_exact(v, 2) for p, v in parts.items()},
        ranks=ranks, percentiles=percentiles, provisional=counts < provisional_minimum,
        task_codes=task_codes, task_list=task_list, profiles=profiles, adjusters=adjusters,
        criteria=recorder.criteria, filled=recorder.filled, evaluated_at=stamp, provenance=scorer.provenance,
    )
