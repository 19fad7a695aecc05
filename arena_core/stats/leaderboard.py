"""Aggregate leaderboards: tools or models ranked by their mean overall score.

Each group gets its number of submissions, its mean overall score with a confidence interval
(the configured method), the mean of each dimension, a rank (ties share a rank, on the
rounded mean) and a provisional mark when it has fewer than ``min_submissions_per_tool``
submissions in the arena.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from attrs import frozen

from arena_core.engine.columns import factorize, split_by_code
from arena_core.engine.ranking import competition_ranks
from arena_core.engine.results import EvaluationBatch
from arena_core.model.records import Evaluation

if TYPE_CHECKING:
    from arena_core.arena import Arena

__all__ = ["GroupRow", "aggregate"]


@frozen
class GroupRow:
    """One tool (or model) on an aggregate leaderboard."""

    rank: int
    name: str
    submissions: int
    mean_overall: float
    ci_low: float
    ci_high: float
    means: dict[str, float]
    """Dimension to the group's mean score on it (dimensions its evaluations have)."""
    provisional: bool


def aggregate(arena: Arena, evaluations: Sequence[Evaluation], by: str) -> list[GroupRow]:
    """Group ``evaluations`` by ``by`` (``tool``, ``model``, or ``tool,model``: each pair, named
    ``TOOL / MODEL``), best mean overall score first.

        An :class:`~arena_core.engine.results.EvaluationBatch` is grouped on its arrays, without
        building an evaluation per submission. Means are exactly rounded sums (``math.fsum``, as
        ``statistics.fmean`` computes them), so the order of the submissions never changes a figure.
    """
    groups: list[tuple[str, list[float], dict[str, float]]] = []
    if isinstance(evaluations, EvaluationBatch):
        table = evaluations.columns()
        overall = np.asarray(table["overall_score"], dtype=float)
        codes, names = _grouped(*(table[key] for key in by.split(",")))
        dimensions = evaluations.dimensions()
        for code, rows in split_by_code(codes):
            means = {}
            for d in dimensions:
                values = np.asarray(table[f"{d}_score"])[rows]
                if measured := values[~np.isnan(values)].tolist():
                    means[d] = _mean(measured)
            groups.append((names[code], overall[rows].tolist(), means))
    else:
        members: dict[str, list[Evaluation]] = {}
        for ev in evaluations:
            [name] = _names(*([getattr(ev, key)] for key in by.split(",")))
            members.setdefault(name, []).append(ev)
        dimensions = list(dict.fromkeys(d for ev in evaluations for d in ev.scores))
        for name, evs in members.items():
            means = {d: _mean(vals) for d in dimensions if (vals := [e.scores[d] for e in evs if d in e.scores])}
            groups.append((name, [e.overall_score for e in evs], means))
    return _ranked(arena, groups)


def _names(*columns: Sequence[str | None]) -> list[str]:
    """Group names: each value (``(unknown)`` when absent), pairs joined with `` / ``."""
    return [" / ".join(value or "(unknown)" for value in row) for row in zip(*columns, strict=True)]


def _grouped(*columns: Sequence[str | None]) -> tuple[np.ndarray, list[str]]:
    """(group code per row, group names) as :func:`_names` would name the rows, factorizing each
    column first: a million rows hold a handful of tools and models, named once each."""
    codes = np.zeros(len(columns[0]), dtype=np.int64)
    distinct_values: list[list[str | None]] = []
    for column in columns:
        column_codes, distinct = factorize(column)
        codes = codes * len(distinct) + column_codes
        distinct_values.append(distinct)
    codes, combined = factorize(codes.tolist())
    keys = []
    for code in combined:
        parts = []
        for distinct in reversed(distinct_values):
            code, index = divmod(code, len(distinct))
            parts.append(distinct[index])
        keys.append(parts[::-1])
    return codes, _names(*zip(*keys, strict=True)) if keys else []


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values)


def _ranked(arena: Arena, groups: list[tuple[str, list[float], dict[str, float]]]) -> list[GroupRow]:
    """(name, overall scores, dimension means) of each group as rows, best rounded mean first
    (ties share a rank, then by name), with the configured interval and provisional mark."""
    summary = sorted(
        ((name, _mean(scores), scores, means) for name, scores, means in groups), key=lambda g: (-round(g[1], 2), g[0])
    )
    ranks = competition_ranks([round(mean, 2) for _, mean, _, _ in summary])
    rows = []
    for rank, (name, mean, scores, means) in zip(ranks, summary, strict=True):
        low, high = arena.confidence_interval(scores)
        provisional = len(scores) < arena.config.min_submissions_per_tool
        rows.append(GroupRow(rank, name, len(scores), mean, low, high, means, provisional))
    return rows
