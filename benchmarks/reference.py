"""A plain NumPy reference for the benchmark: the same work as ``Arena.evaluate_many`` on records.

It starts from the same list of dicts, reads each field into an array, computes each task's
baseline (median, min, max of tokens, tool calls, time and cost), the spec's linear scores, the
default weighted overall score, and ranks and percentiles within each task. No validation, no
plugins, no criteria beyond the reported pass rate: what a careful hand-written script would do,
so the ratio says what arena-core's checks and generality cost on top of the arithmetic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Any

import numpy as np

FIGURES = (
    "total_tokens",
    "tool_calls",
    "execution_time",
    "estimated_cost",
    "iterations",
    "tests_passed",
    "tests_total",
)


def score_records(records: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    n = len(records)
    columns = {f: np.array(list(map(dict.get, records, repeat(f, n), repeat(np.nan, n))), dtype=float) for f in FIGURES}
    task_ids = np.array(list(map(dict.get, records, repeat("task_id", n))), dtype=object)
    _, task = np.unique(task_ids.astype(str), return_inverse=True)
    order = np.argsort(task, kind="stable")
    sorted_task = task[order]
    starts = np.flatnonzero(np.r_[True, sorted_task[1:] != sorted_task[:-1]])
    sizes = np.diff(np.r_[starts, n])

    def linear(field: str) -> np.ndarray:
        values = columns[field]
        in_order = values[order]
        low = np.repeat(np.fmin.reduceat(in_order, starts), sizes)
        high = np.repeat(np.fmax.reduceat(in_order, starts), sizes)
        span = np.where(high > low, high - low, 1.0)
        score = np.empty(n)
        score[order] = np.clip((high - in_order) / span, 0, 1) * 100
        return np.where(np.isnan(values), 50.0, score)

    efficiency = 0.5 * linear("total_tokens") + 0.3 * linear("tool_calls") + 0.2 * linear("iterations")
    speed = linear("execution_time")
    cost = linear("estimated_cost")
    with np.errstate(invalid="ignore", divide="ignore"):
        correctness = np.nan_to_num(columns["tests_passed"] / columns["tests_total"], nan=1.0) * 100
    overall = np.round(0.3 * efficiency + 0.2 * speed + 0.2 * cost + 0.3 * correctness, 2)
    # Ranks within each task, best first, ties sharing the best rank; percentile: share strictly below.
    by_score = np.lexsort((-overall, task))
    g, v = task[by_score], overall[by_score]
    index = np.arange(n)
    new_group = np.r_[True, g[1:] != g[:-1]]
    new_run = new_group | np.r_[True, v[1:] != v[:-1]]
    group_start = np.maximum.accumulate(np.where(new_group, index, 0))
    run_start = np.maximum.accumulate(np.where(new_run, index, 0))
    group_size = np.repeat(sizes, sizes)
    run_end = np.minimum.accumulate(np.where(np.r_[new_run[1:], True], index, n)[::-1])[::-1]
    ranks = np.empty(n, dtype=np.int64)
    percentiles = np.empty(n)
    ranks[by_score] = run_start - group_start + 1
    percentiles[by_score] = np.round((group_start + group_size - 1 - run_end) / group_size * 100, 1)
    return {"overall_score": overall, "overall_ranking": ranks, "percentile": percentiles}
