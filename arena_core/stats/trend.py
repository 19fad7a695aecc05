"""Scores against time: each group at its date, the frontier, and how fast the frontier rises.

SWE-bench's site plots resolved rate against release date; METR fits the trend of the best
models over time with an interval. A group is on the **frontier** when it beats every group
dated before it: ``strict`` (the default) asks it to score higher than all of them, ``ties``
also keeps a group that equals the best so far (the two differ on ties only). Groups dated the
same day do not compete for the frontier with each other. The frontier's **slope** is the
least-squares line through its points, in points per year (365.25 days); its interval
resamples the tasks (a percentile bootstrap, seeded): each draw scores every group again on the
drawn tasks, finds the frontier again and fits it again.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping

import numpy as np
from attrs import frozen

from arena_core.model.checks import moment

__all__ = ["FRONTIER_RULES", "Trend", "TrendPoint", "frontier", "slope", "trend", "years_of"]

#: How a group that equals the best score before it is treated.
FRONTIER_RULES = ("strict", "ties")
_YEAR = 365.25 * 86400.0


@frozen
class TrendPoint:
    group: str
    x: str
    """The group's date (ISO-8601)."""
    y: float
    """Its mean over its tasks of its per-task mean score."""
    n_tasks: int
    on_frontier: bool


@frozen
class Trend:
    points: tuple[TrendPoint, ...]
    """Every dated group, oldest first."""
    rule: str
    slope: float
    """The frontier's least-squares slope, points per year (NaN below two dates on it)."""
    ci_low: float
    ci_high: float
    undated: tuple[str, ...] = ()
    """Groups without a date, left out."""


def frontier(years: np.ndarray, y: np.ndarray, rule: str = "strict") -> np.ndarray:
    """Whether each group is on the frontier: its ``y`` above (``ties``: at least) the best ``y``
    of every group dated strictly before it; groups without a score (NaN) are not."""
    order = np.argsort(years, kind="stable")
    dates, ys = years[order], y[order]
    values = np.where(np.isnan(ys), -math.inf, ys)
    unique, starts = np.unique(dates, return_index=True)
    best_of_day = np.maximum.reduceat(values, starts) if len(values) else values
    before = np.concatenate([[-math.inf], np.maximum.accumulate(best_of_day)[:-1]]) if len(values) else values
    best = before[np.searchsorted(unique, dates)]
    on_sorted = (ys > best if rule == "strict" else ys >= best) & ~np.isnan(ys)
    on = np.zeros(len(y), dtype=bool)
    on[order] = on_sorted
    return on


def slope(years: np.ndarray, y: np.ndarray) -> float:
    """The least-squares slope of ``y`` on ``years`` (NaN below two distinct dates)."""
    if len(np.unique(years)) < 2:
        return math.nan
    centred = years - years.mean()
    return float((centred * (y - y.mean())).sum() / (centred**2).sum())


def trend(
    groups: list[str],
    scores: np.ndarray,
    dates: Mapping[str, str],
    *,
    rule: str = "strict",
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Trend:
    """The trend of ``groups`` whose per-task scores are the rows of ``scores`` (``(groups,
    tasks)``, NaN where a group ran no task) at ``dates`` (group to ISO-8601 date)."""
    if rule not in FRONTIER_RULES:
        raise ValueError(f"rule: expected one of {', '.join(FRONTIER_RULES)}, got {rule!r}")
    dated = [i for i, g in enumerate(groups) if g in dates]
    years = np.array([years_of(dates[groups[i]]) for i in dated])
    matrix = scores[dated]
    ran = ~np.isnan(matrix)
    filled = np.where(ran, matrix, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        y = filled.sum(axis=1) / ran.sum(axis=1)
    on = frontier(years, y, rule)
    found = slope(years[on], y[on])
    rng = np.random.default_rng(seed)
    draws = np.empty(resamples)
    tasks = matrix.shape[1]
    for k in range(resamples):
        weights = np.bincount(rng.integers(0, tasks, tasks), minlength=tasks).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            again = (filled @ weights) / (ran @ weights)
        kept = frontier(years, again, rule)
        draws[k] = slope(years[kept], again[kept])
    valid = draws[~np.isnan(draws)]
    low, high = (
        (float(q) for q in np.quantile(valid, [(1 - confidence) / 2, (1 + confidence) / 2]))
        if valid.size and not math.isnan(found)
        else (math.nan, math.nan)
    )
    order = np.argsort(years, kind="stable")
    points = tuple(
        TrendPoint(groups[dated[i]], dates[groups[dated[i]]], float(y[i]), int(ran[i].sum()), bool(on[i]))
        for i in order.tolist()
        if not math.isnan(y[i])
    )
    return Trend(points, rule, found, low, high, tuple(sorted(g for g in groups if g not in dates)))


def years_of(text: str) -> float:
    """An ISO-8601 date as years since 1970 (UTC)."""
    when = moment(text)
    assert when is not None  # checked where the dates were read
    return (when - datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)).total_seconds() / _YEAR
