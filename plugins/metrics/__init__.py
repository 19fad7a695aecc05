"""Built-in plugin ``metrics``: the spec's metrics and the named alternatives.

Each spec formula is the spec's, branch for branch, so the default configuration reproduces the
spec's numbers exactly (:mod:`~arena_plugins.metrics.spec`); the alternatives are selected by
name in the configuration (:mod:`~arena_plugins.metrics.alternatives`); correctness runs the
task's criterion checkers (:mod:`~arena_plugins.metrics.correctness`); community scores people's
votes (:mod:`~arena_plugins.metrics.community`).
"""

from __future__ import annotations

from arena_core import hookimpl
from arena_plugins.metrics.alternatives import PERCENTILE_METRICS, TokenEfficiencyLog, TokenEfficiencyRobust
from arena_plugins.metrics.community import Community
from arena_plugins.metrics.correctness import Correctness
from arena_plugins.metrics.normalise import linear_score, linear_scores
from arena_plugins.metrics.spec import EFFICIENCY, Cost, IterationEfficiency, Speed, TokenEfficiency, ToolCallEfficiency

__all__ = ["arena_register_metrics", "linear_score", "linear_scores"]


@hookimpl
def arena_register_metrics() -> list[object]:
    return [
        TokenEfficiency(),
        TokenEfficiencyLog(),
        TokenEfficiencyRobust(),
        *PERCENTILE_METRICS,
        ToolCallEfficiency(),
        IterationEfficiency(),
        EFFICIENCY,
        Speed(),
        Cost(),
        Correctness(),
        Community(),
    ]
