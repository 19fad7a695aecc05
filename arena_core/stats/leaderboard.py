"""Aggregate leaderboards: tools or models ranked by their mean overall score.

Each group gets its number of submissions, its mean overall score with a confidence interval
(the configured method), the mean of each dimension, a rank (ties share a rank, on the
rounded mean) and a provisional mark when it has fewer than ``min_submissions_per_tool``
submissions in the arena.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from attrs import frozen

from arena_core.engine.ranking import competition_ranks
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
    """Group ``evaluations`` by ``by`` (``tool`` or ``model``), best mean overall score first."""
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
