"""Per-group statistics in O(n log n): baselines of many tasks at once, ranks and percentiles within each."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np

from arena_core.engine.baselines import FIGURES, MIN_SUBMISSIONS
from arena_core.engine.columns import (
    Columns,
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
) -> list[Baseline]:
    """The spec's baseline of each group of rows (``groups`` holds codes 0..count-1), as
    :func:`arena_core.engine.baselines.compute_baseline` computes it (``samples`` and
    ``assume_one`` too), with sorting done once per figure."""

    sizes = np.bincount(groups, minlength=count)
    reported = np.bincount(groups[~np.isnan(columns.numeric["iterations"])], minlength=count) > 0
    lacking = {}
    for figure in FIGURES:
        values = columns.numeric[figure]
        missing = np.isnan(values) | ((values == 0) if figure in ZERO_MEANS_MISSING else False)
        lacking[figure] = np.bincount(groups[missing], minlength=count)
    # A group's figures as bits (1 << the figure's place in FIGURES), and each set of bits named
    # once: per group, a lookup rather than a loop over the figures.
    bits = 1 << np.arange(len(FIGURES))
    named = {k: tuple(f for i, f in enumerate(FIGURES) if k >> i & 1) for k in range(1 << len(FIGURES))}
    some_lack = np.column_stack([(lacking[f] > 0) & (lacking[f] < sizes) for f in FIGURES]).reshape(count, -1)
    partial = [named[k] for k in (some_lack.astype(np.int64) @ bits).tolist()]
    stats: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    q25 = q75 = np.full(count, np.nan)
    kept_samples: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for field, positive_only in (
        ("total_tokens", False),
        ("tool_calls", False),
        ("execution_time", True),
        ("estimated_cost", True),
        ("iterations", False),
    ):
        values = columns.numeric[field]
        if field == "iterations" and assume_one:
            values = np.where(np.isnan(values), 1.0, values)
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
        median = np.where(
            length % 2 == 1,
            data[middle.clip(max=len(data) - 1)] if len(data) else 0.0,
            (data[lower.clip(max=len(data) - 1)] + data[middle.clip(max=len(data) - 1)]) / 2 if len(data) else 0.0,
        )
        stats[field] = (
            present,
            median,
            data[safe] if len(data) else np.zeros(count),
            data[last] if len(data) else np.zeros(count),
        )
        if field == "total_tokens":
            q25, q75 = _quantiles(data, start, length)
        if field in samples:
            kept_samples[field] = (data, bounds)
    # Per group below, plain Python values: the arrays are read into lists once and each
    # group's figures picked by one comprehension per figure, not an element at a time (a
    # hundred thousand groups make that the loop's main cost).
    fallbacks = {  # per default baseline (a few shared ones), the figures it supplies
        id(d): {
            "total_tokens": (d.median_tokens, d.min_tokens, d.max_tokens),
            "tool_calls": (d.median_tool_calls, d.min_tool_calls, d.max_tool_calls),
            "execution_time": (300, 60, 1800),
            "estimated_cost": (0.05, 0.01, 0.20),
            "iterations": (d.median_iterations, 1.0, 1.0),
        }
        for d in defaults
    }
    fallback_of = [fallbacks[id(d)] for d in defaults]
    picked = {
        field: [
            (m, lo, hi) if p else fb[field]
            for p, m, lo, hi, fb in zip(*(a.tolist() for a in stats[field]), fallback_of, strict=True)
        ]
        for field in stats
    }
    measured = np.column_stack([reported if f == "iterations" else stats[f][0] for f in FIGURES]).reshape(count, -1)
    defaulted = [named[k] for k in ((~measured).astype(np.int64) @ bits).tolist()]
    q25_list = [None if v != v else v for v in q25.tolist()]
    q75_list = [None if v != v else v for v in q75.tolist()]
    sample_bounds = {f: (data, bounds.tolist()) for f, (data, bounds) in kept_samples.items()}
    out = []
    for code, (size, tokens, calls, times, costs, iterations) in enumerate(
        zip(
            sizes.tolist(),
            picked["total_tokens"],
            picked["tool_calls"],
            picked["execution_time"],
            picked["estimated_cost"],
            picked["iterations"],
            strict=True,
        )
    ):
        if size < MIN_SUBMISSIONS:
            out.append(
                attrs.evolve(
                    defaults[code],
                    task_id=task_ids[code],
                    submission_count=0,
                    last_updated=stamp,
                    defaulted=FIGURES,
                    partial=partial[code],
                )
            )
            continue
        out.append(
            Baseline(
                median_tokens=tokens[0],
                min_tokens=tokens[1],
                max_tokens=tokens[2],
                median_tool_calls=calls[0],
                min_tool_calls=calls[1],
                max_tool_calls=calls[2],
                median_execution_time=times[0],
                min_execution_time=times[1],
                max_execution_time=times[2],
                median_cost=costs[0],
                min_cost=costs[1],
                max_cost=costs[2],
                median_iterations=iterations[0],
                q25_tokens=q25_list[code],
                q75_tokens=q75_list[code],
                submission_count=size,
                task_id=task_ids[code],
                last_updated=stamp,
                defaulted=defaulted[code],
                partial=partial[code],
                samples={
                    f: tuple(data[bounds[code] : bounds[code + 1]].tolist())
                    for f, (data, bounds) in sample_bounds.items()
                    if bounds[code + 1] > bounds[code]
                }
                if sample_bounds
                else {},
            )
        )
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
