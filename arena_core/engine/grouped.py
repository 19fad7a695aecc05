"""Per-group statistics in O(n log n): baselines of many tasks at once, ranks and percentiles within each."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import attrs
import numpy as np

from arena_core.engine.baselines import FIGURES, MIN_SUBMISSIONS
from arena_core.engine.baselinetable import BaselineTable, Figures
from arena_core.engine.columns import (
    Columns,
    all_measured,
    factorize_objects,
    order_within_groups,
)
from arena_core.engine.rounding import round_exact
from arena_core.engine.telemetry import ZERO_MEANS_MISSING
from arena_core.model.records import Baseline


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
    columns: Columns,
    groups: np.ndarray,
    count: int,
    defaults: Sequence[Baseline],
    task_ids: Sequence[str],
    stamp: str,
    samples: Sequence[str] = (),
    assume_one: bool = True,
    *,
    minimum: int = MIN_SUBMISSIONS,
    partial: Sequence[tuple[str, ...]] | None = None,
) -> BaselineTable:
    """The spec's baseline of each group of rows (``groups`` holds codes 0..count-1), as
    :func:`arena_core.engine.baselines.compute_baseline` computes it (``samples`` and
    ``assume_one`` too), with sorting done once per figure: a table of the figures as arrays,
    each group's :class:`Baseline` built when it is read.

    :param minimum: below this many rows a group takes its default (the spec's 5).
    :param partial: each group's partly measured figures, when they are to be judged on other
        rows than these (a gate's baselines come from the runs that passed it, while a figure
        some run of the task lacks is left out for all of them).
    """

    sizes = np.bincount(groups, minlength=count)
    iterations = columns.numeric["iterations"]
    reported = (
        sizes > 0 if all_measured(iterations) else np.bincount(groups[~np.isnan(iterations)], minlength=count) > 0
    )
    # A group's figures as bits (1 << the figure's place in FIGURES), and each set of bits named
    # once: per group, a lookup rather than a loop over the figures.
    bits = 1 << np.arange(len(FIGURES))
    partly_measured = partly_measured_figures(columns, groups, count, sizes) if partial is None else partial
    order = _GroupOrder(columns, groups, count, assume_one)
    stats: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # present, min, max
    ordered = bool(len(groups) < 2 or (groups[1:] >= groups[:-1]).all())  # rows clustered by task, in order
    for field in _FAMILIES:
        values, kept_groups = order.kept(field)
        present = sizes > 0 if kept_groups is groups else np.bincount(kept_groups, minlength=count) > 0
        low, high = _bounds(values, kept_groups, count, ordered)
        stats[field] = (present, np.where(present, low, 0.0), np.where(present, high, 0.0))
    kept_samples = {field: order.sorted(field) for field in samples}
    default_codes, distinct_defaults = factorize_objects(defaults)  # a few shared default baselines
    fallbacks = {  # per distinct default baseline, the figures it supplies
        id(d): {
            "total_tokens": (d.median_tokens, d.min_tokens, d.max_tokens),
            "tool_calls": (d.median_tool_calls, d.min_tool_calls, d.max_tool_calls),
            "execution_time": (300, 60, 1800),
            "estimated_cost": (0.05, 0.01, 0.20),
            "iterations": (d.median_iterations, 1.0, 1.0),
        }
        for d in distinct_defaults
    }
    measured = np.column_stack([reported if f == "iterations" else stats[f][0] for f in FIGURES]).reshape(count, -1)
    defaulted = [_NAMED[k] for k in ((~measured).astype(np.int64) @ bits).tolist()]
    small = sizes < minimum

    def build(code: int) -> Baseline:
        """Group ``code``'s baseline, as :func:`~arena_core.engine.baselines.compute_baseline` makes it."""
        default = defaults[code]
        if small[code]:
            return attrs.evolve(
                default,
                task_id=task_ids[code],
                submission_count=0,
                last_updated=stamp,
                defaulted=FIGURES,
                partial=partly_measured[code],
            )
        fallback = fallbacks[id(default)]
        spread: dict[str, Any] = {}  # median_tokens, min_tokens, max_tokens, ...
        q25, q75 = order.quartiles()
        for field, (present, low, high) in stats.items():
            if present[code]:
                values = (float(order.median(field)[code]), float(low[code]), float(high[code]))
            else:
                values = fallback[field]
            family = _FAMILIES[field]
            spread[f"median_{family}"] = values[0]
            if family != "iterations":  # a baseline keeps only the median of iterations
                spread[f"min_{family}"], spread[f"max_{family}"] = values[1], values[2]
        return Baseline(
            **spread,
            q25_tokens=None if np.isnan(q25[code]) else float(q25[code]),
            q75_tokens=None if np.isnan(q75[code]) else float(q75[code]),
            submission_count=int(sizes[code]),
            task_id=task_ids[code],
            last_updated=stamp,
            defaulted=defaulted[code],
            partial=partly_measured[code],
            samples={
                f: tuple(data[bounds[code] : bounds[code + 1]].tolist())
                for f, (data, bounds) in kept_samples.items()
                if bounds[code + 1] > bounds[code]
            },
        )

    figures = _figure_arrays(stats, order, sizes, small, (default_codes, distinct_defaults), fallbacks)
    return BaselineTable(figures, build, count)


def passed_baselines(
    columns: Columns,
    groups: np.ndarray,
    count: int,
    defaults: Sequence[Baseline],
    task_ids: Sequence[str],
    stamp: str,
    samples: Sequence[str],
    assume_one: bool,
    passed: np.ndarray,
) -> tuple[BaselineTable, np.ndarray]:
    """Under a gate (engine/gating.py): each group's baseline of the rows that ``passed`` it (a
    boolean mask), whatever their number, its partly measured figures judged on all of its rows;
    and per group whether none of its rows passed (it then has no resource baseline)."""
    kept = np.flatnonzero(passed)
    table = group_baselines(
        columns.take(kept),
        groups[kept],
        count,
        defaults,
        task_ids,
        stamp,
        samples,
        assume_one,
        minimum=1,
        partial=partly_measured_figures(columns, groups, count),
    )
    return table, np.bincount(groups[kept], minlength=count) == 0


#: Each set of figures, by its bits (1 << a figure's place in FIGURES).
_NAMED = {k: tuple(f for i, f in enumerate(FIGURES) if k >> i & 1) for k in range(1 << len(FIGURES))}


def partly_measured_figures(
    columns: Columns, groups: np.ndarray, count: int, sizes: np.ndarray | None = None
) -> list[tuple[str, ...]]:
    """Per group, the figures some of its rows lack and others have (0 time or cost counts as
    lacking). ``sizes``: each group's rows, when the caller counted them."""
    sizes = np.bincount(groups, minlength=count) if sizes is None else sizes
    some_lack = []
    for figure in FIGURES:
        values = columns.numeric[figure]
        if all_measured(values, figure in ZERO_MEANS_MISSING):
            some_lack.append(np.zeros(count, dtype=bool))
            continue
        missing = np.isnan(values) | ((values == 0) if figure in ZERO_MEANS_MISSING else False)
        lacking = np.bincount(groups[missing], minlength=count)
        some_lack.append((lacking > 0) & (lacking < sizes))
    bits = 1 << np.arange(len(FIGURES))
    return [
        _NAMED[k] for k in (np.column_stack(some_lack).reshape(count, len(FIGURES)).astype(np.int64) @ bits).tolist()
    ]


def _figure_arrays(
    stats: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    order: _GroupOrder,
    sizes: np.ndarray,
    small: np.ndarray,
    defaults: tuple[np.ndarray, list[Baseline]],
    fallbacks: dict[int, dict[str, tuple[float, float, float]]],
) -> Figures:
    """The figures ``build`` gives each group, as arrays: the statistics where the group measured
    the figure, its default's fallback where not, and its default's own figures (and no runs)
    below the minimum number of submissions. ``defaults``: each group's code into the distinct
    default baselines, and those. Medians and quartiles are computed when first read."""
    codes, distinct = defaults

    def per_group(values: Sequence[object]) -> np.ndarray:  # one value per distinct default
        return np.array(values, dtype=float)[codes] if len(codes) else np.zeros(0)

    def own(name: str) -> np.ndarray:
        return per_group([getattr(d, name) for d in distinct])

    def figure(name: str, field: str, k: int, values: np.ndarray) -> np.ndarray:
        fallback = per_group([fallbacks[id(d)][field][k] for d in distinct])
        return np.where(small, own(name), np.where(stats[field][0], values, fallback))

    def median(name: str, field: str) -> np.ndarray:
        return figure(name, field, 0, order.median(field))

    ready = {"submission_count": np.where(small, 0, sizes).astype(float)}
    pending: dict[str, Callable[[], np.ndarray]] = {}
    for field, family in _FAMILIES.items():
        _, low, high = stats[field]
        pending[f"median_{family}"] = partial(median, f"median_{family}", field)
        if family != "iterations":  # a baseline keeps only the median of iterations
            ready[f"min_{family}"] = figure(f"min_{family}", field, 1, low)
            ready[f"max_{family}"] = figure(f"max_{family}", field, 2, high)
    pending["q25_tokens"] = lambda: np.where(small, own("q25_tokens"), order.quartiles()[0])
    pending["q75_tokens"] = lambda: np.where(small, own("q75_tokens"), order.quartiles()[1])
    return Figures(pending, ready)


def _bounds(values: np.ndarray, groups: np.ndarray, count: int, ordered: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each group's least and greatest value (inf and -inf for a group without values): by
    reducing each group's stretch when the rows come group by group in order (as a partition of
    an input clustered by task does), else by scatter, without a sort (several times slower)."""
    low, high = np.full(count, np.inf), np.full(count, -np.inf)
    if ordered:
        starts = np.searchsorted(groups, np.arange(count))
        held = np.flatnonzero(np.diff(np.append(starts, len(groups))) > 0)
        if len(held):
            low[held] = np.minimum.reduceat(values, starts[held])
            high[held] = np.maximum.reduceat(values, starts[held])
        return low, high
    np.minimum.at(low, groups, values)
    np.maximum.at(high, groups, values)
    return low, high


#: The largest whole number :func:`_counted_medians` counts: iteration counts (an agent's cap is
#: commonly 100 to 250 turns), tool calls of short runs.
_COUNTED_UP_TO = 1023


def _counted_medians(values: np.ndarray, groups: np.ndarray, count: int) -> np.ndarray | None:
    """Each group's median by counting, without a sort, when the values are whole numbers from
    0 to :data:`_COUNTED_UP_TO` (iterations are) and the table of groups by values stays within a
    few times the rows; ``None`` otherwise. 0 for a group without values."""
    if not len(values) or values.min() < 0 or values.max() > _COUNTED_UP_TO or (np.trunc(values) != values).any():
        return None
    width = int(values.max()) + 1
    if count * width > 4 * len(values) + 4096:
        return None
    table = np.bincount(groups * width + values.astype(np.int64), minlength=count * width).reshape(count, width)
    below = table.cumsum(axis=1)  # per group, how many values are at most each whole number
    length = below[:, -1]
    # The values at ranks (n-1)//2 and n//2 (from 0): the middle one, or the middle two.
    lower = (below <= ((length - 1) // 2)[:, None]).sum(axis=1)
    upper = (below <= (length // 2)[:, None]).sum(axis=1)
    medians: np.ndarray = np.where(length > 0, (lower + upper) / 2, 0.0)
    return medians


class _GroupOrder:
    """Each figure's counted values sorted within their groups, when first needed: medians and
    the token quartiles need the order, the bounds do not, and the batch path's default metrics
    read only the bounds and the median of iterations (a sort of a million values is 0.05 s)."""

    def __init__(self, columns: Columns, groups: np.ndarray, count: int, assume_one: bool) -> None:
        self._columns, self._groups, self._count, self._assume_one = columns, groups, count, assume_one
        self._medians: dict[str, np.ndarray] = {}
        self._quartiles: tuple[np.ndarray, np.ndarray] | None = None

    def kept(self, field: str) -> tuple[np.ndarray, np.ndarray]:
        """(the values that count toward the baseline, their groups): measured, and for time and
        cost positive; an absent iteration count is 1 when ``assume_one``."""
        values = self._columns.numeric[field]
        if all_measured(values, field in ZERO_MEANS_MISSING):
            return values, self._groups  # every row counts: nothing to copy
        if field == "iterations" and self._assume_one:
            values = np.where(np.isnan(values), 1.0, values)
        keep = ~np.isnan(values)
        if field in ZERO_MEANS_MISSING:
            keep &= values > 0
        if keep.all():  # every row counts: nothing to copy
            return values, self._groups
        return values[keep], self._groups[keep]

    def sorted(self, field: str) -> tuple[np.ndarray, np.ndarray]:
        """(the kept values by group, then value; where each group starts, and the end)."""
        values, groups = self.kept(field)
        order = order_within_groups(values, groups)
        return values[order], np.searchsorted(groups[order], np.arange(self._count + 1))

    def _selected(self, field: str) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`sorted` for a single group, as far as its median and quartiles read it: the
        values with those places' values in place (``np.partition``, linear time; a pipeline
        batch computes one task's baseline from its whole history)."""
        values, _ = self.kept(field)
        n = len(values)
        if n < 2:
            return values, np.array([0, n])
        places = {n // 2, n // 2 - 1}  # the median's (see below)
        if field == "total_tokens":  # the quartiles' (see _quantiles)
            for i in (1, 3):
                j = min(max(i * (n + 1) // 4, 1), n - 1)
                places |= {j - 1, j}
        return np.partition(values, sorted(places)), np.array([0, n])

    def median(self, field: str) -> np.ndarray:
        """Each group's median (``statistics.median``: the mean of the middle two for an even
        count); 0 for a group without values."""
        if field not in self._medians and field != "total_tokens":
            counted = _counted_medians(*self.kept(field), self._count)
            if counted is not None:
                self._medians[field] = counted
        if field not in self._medians:
            data, bounds = self.sorted(field) if self._count > 1 else self._selected(field)
            start, length = bounds[:-1], np.diff(bounds)
            if field == "total_tokens":
                self._quartiles = _quantiles(data, start, length)
            if not len(data):
                self._medians[field] = np.zeros(self._count)
                return self._medians[field]
            safe = np.where(length > 0, start, 0)
            middle = (safe + length // 2).clip(max=len(data) - 1)
            lower = np.where(length % 2 == 0, np.maximum(middle - 1, safe), middle).clip(max=len(data) - 1)
            self._medians[field] = np.where(length % 2 == 1, data[middle], (data[lower] + data[middle]) / 2)
        return self._medians[field]

    def quartiles(self) -> tuple[np.ndarray, np.ndarray]:
        """Each group's first and third token quartiles (see :func:`_quantiles`)."""
        if self._quartiles is None:
            self.median("total_tokens")
        assert self._quartiles is not None
        return self._quartiles


_FAMILIES = {
    "total_tokens": "tokens",
    "tool_calls": "tool_calls",
    "execution_time": "execution_time",
    "estimated_cost": "cost",
    "iterations": "iterations",
}


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
