"""Bias detection: does a tool score systematically higher or lower than the others?

For each tool and each dimension, the tool's mean score is compared with the mean of all
other tools' submissions. The difference is flagged when it is larger than its uncertainty:
``z`` standard errors of the difference of two means (Welch's standard error), 1.96 for 95%.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from attrs import frozen

from arena_core.model.records import Evaluation

__all__ = ["BiasFinding", "detect_bias"]


@frozen
class BiasFinding:
    """One tool's mean on one dimension against everyone else's."""

    tool: str
    metric: str
    mean: float
    others_mean: float
    difference: float
    """``mean - others_mean``."""
    margin: float
    """``z`` standard errors of the difference; ``inf`` when either side has fewer than 2 scores."""
    flagged: bool
    """``|difference| > margin``."""


def detect_bias(evaluations: Sequence[Evaluation], *, z: float = 1.96) -> list[BiasFinding]:
    """A finding per (tool, dimension), sorted by tool then dimension order."""
    by_tool: dict[str, list[Evaluation]] = {}
    for ev in evaluations:
        by_tool.setdefault(ev.tool or "(unknown)", []).append(ev)
    dimensions = list(dict.fromkeys(d for ev in evaluations for d in ev.scores))
    findings = []
    for tool in sorted(by_tool):
        for metric in dimensions:
            mine = [ev.scores[metric] for ev in by_tool[tool] if metric in ev.scores]
            others = [ev.scores[metric] for t, evs in by_tool.items() if t != tool for ev in evs if metric in ev.scores]
            if not mine or not others:
                continue
            difference = statistics.fmean(mine) - statistics.fmean(others)
            if len(mine) < 2 or len(others) < 2:
                margin = math.inf
            else:
                margin = z * math.sqrt(
                    statistics.variance(mine) / len(mine) + statistics.variance(others) / len(others)
                )
            findings.append(
                BiasFinding(
                    tool,
                    metric,
                    statistics.fmean(mine),
                    statistics.fmean(others),
                    difference,
                    margin,
                    abs(difference) > margin,
                )
            )
    return findings
