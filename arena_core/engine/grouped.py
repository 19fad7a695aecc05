"""Per-group statistics in O(n log n): baselines of many tasks at once, ranks and percentiles within each."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import attrs
import numpy as np

from arena_core.engine.baselines import FIGURES, MIN_SUBMISSIONS
from arena_core.engine.baselinetable import BaselineTable, Figures
from arena_core.engine.columns import Columns, all_measured, factorize_objects
from arena_core.engine.grouporder import GroupOrder
from arena_core.engine.ordered import order_within_groups
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
    order: GroupOrder | None = None,
) -> BaselineTable:
    """The spec's baseline of each group of rows (``groups`` holds codes 0..count-1), as
    :func:`arena_core.engine.baselines.compute_baseline` computes it (``samples`` and
    ``assume_one`` too), with sorting done once per figure: a table of the figures as arrays,
    each group's :class:`Baseline` built when it is read.

    :param minimum: below this many rows a group takes its default (the spec's 5).
    :param partial: each group's partly measured figures, when they are to be judged on other
        rows than these (a gate's baselines come from the runs that passed it, while a figure
        some run of the task lacks is left out for all of them).
    :param order: the caller's :class:`GroupOrder` of these columns and groups, when it reads
        the same medians itself (the pipeline's outlier check reads the tasks' token medians):
        each figure is then sorted once for both.
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
    order = GroupOrder(columns, groups, count, assume_one) if order is None else order
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
    order: GroupOrder,
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


_FAMILIES = {
    "total_tokens": "tokens",
    "tool_calls": "tool_calls",
    "execution_time": "execution_time",
    "estimated_cost": "cost",
    "iterations": "iterations",
}
