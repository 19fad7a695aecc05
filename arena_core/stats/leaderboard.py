"""Aggregate leaderboards: tools or models ranked by their mean overall score.

Each group gets its number of submissions, its mean overall score with a confidence interval
(the configured method), the mean of each dimension, a rank (ties share a rank, on the
rounded mean) and a provisional mark when it has fewer than ``min_submissions_per_tool``
submissions in the arena.
"""

from __future__ import annotations

import math
import statistics
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
    """Group ``evaluations`` by ``by`` (``tool`` or ``model``), best mean overall score first.

    An :class:`~arena_core.engine.results.EvaluationBatch` is aggregated on its arrays, without
    building an evaluation per submission; the numbers are the same (means are exactly rounded
    sums, ``math.fsum``, as ``statistics.fmean`` computes them).
    """
    if isinstance(evaluations, EvaluationBatch):
        return _aggregate_columns(arena, evaluations, by)
    groups: dict[str, list[Evaluation]] = {}
    for ev in evaluations:
        groups.setdefault(getattr(ev, by) or "(unknown)", []).append(ev)
    dimensions = list(dict.fromkeys(d for ev in evaluations for d in ev.scores))
    summary = sorted(
        ((name, statistics.fmean(e.overall_score for e in evs), evs) for name, evs in groups.items()),
        key=lambda g: (-round(g[1], 2), g[0]),
    )
    ranks = competition_ranks([round(mean, 2) for _, mean, _ in summary])
    rows = []
    for rank, (name, mean, evs) in zip(ranks, summary, strict=True):
        low, high = arena.confidence_interval([e.overall_score for e in evs])
        means = {d: statistics.fmean(vals) for d in dimensions if (vals := [e.scores[d] for e in evs if d in e.scores])}
        rows.append(
            GroupRow(rank, name, len(evs), mean, low, high, means, len(evs) < arena.config.min_submissions_per_tool)
        )
    return rows


def _aggregate_columns(arena: Arena, batch: EvaluationBatch, by: str) -> list[GroupRow]:
    table = batch.columns()
    overall = np.asarray(table["overall_score"], dtype=float)
    dimensions = [d for d in batch.scores if not np.isnan(table[f"{d}_score"]).all()]
    codes, names = factorize([name or "(unknown)" for name in table[by]])
    groups = []
    for code, rows in split_by_code(codes):
        scores = overall[rows].tolist()
        means = {}
        for d in dimensions:
            values = np.asarray(table[f"{d}_score"])[rows]
            values = values[~np.isnan(values)]
            if len(values):
                means[d] = math.fsum(values.tolist()) / len(values)
        groups.append((names[code], math.fsum(scores) / len(scores), scores, means))
    groups.sort(key=lambda g: (-round(g[1], 2), g[0]))
    ranks = competition_ranks([round(mean, 2) for _, mean, _, _ in groups])
    rows_out = []
    for rank, (name, mean, scores, means) in zip(ranks, groups, strict=True):
        low, high = arena.confidence_interval(scores)
        provisional = len(scores) < arena.config.min_submissions_per_tool
        rows_out.append(GroupRow(rank, name, len(scores), mean, low, high, means, provisional))
    return rows_out
