"""Per-baseline preparation: metrics that compute something from a baseline once, not per record.

A per-record metric may have ``prepare(baseline) -> Metric``: the engine calls it once for
each distinct baseline of a scoring pass (a task's, or a task and tool's under a narrower
``baseline_scope``) and scores that baseline's submissions with the metric it returns. A
z-score metric sorts or summarises ``baseline.samples`` there instead of in every ``score``
call. The wrappers the engine puts around metrics (the missing-telemetry guard, composites)
pass the preparation through to what they wrap.
"""

from __future__ import annotations

import attrs

from arena_core.engine.composite import WeightedSum
from arena_core.engine.telemetry import Guarded
from arena_core.model.errors import PluginError
from arena_core.model.protocols import Metric
from arena_core.model.records import Baseline

__all__ = ["needs_preparing", "prepare"]


def needs_preparing(metric: Metric) -> bool:
    """Whether ``metric``, or a metric it wraps, has a ``prepare`` step."""
    if isinstance(metric, Guarded):
        return needs_preparing(metric.inner)
    if isinstance(metric, WeightedSum):
        return any(needs_preparing(part) for _, part, _ in metric.bound)
    return hasattr(metric, "prepare")


def prepare(metric: Metric, baseline: Baseline) -> Metric:
    """``metric`` ready to score submissions against ``baseline``.

    :raises PluginError: ``prepare`` raised, or returned something that is not a metric.
    """
    if isinstance(metric, Guarded):
        return attrs.evolve(metric, inner=prepare(metric.inner, baseline))
    if isinstance(metric, WeightedSum):
        return attrs.evolve(metric, bound=tuple((slot, prepare(m, baseline), w) for slot, m, w in metric.bound))
    step = getattr(metric, "prepare", None)
    if step is None:
        return metric
    try:
        ready = step(baseline)
    except Exception as exc:
        raise PluginError(f"metric {metric.name!r} failed to prepare for task {baseline.task_id!r}: {exc!r}") from exc
    if not isinstance(ready, Metric):
        raise PluginError(f"metric {metric.name!r}: prepare() returned {ready!r}, not a metric with name and score")
    return ready
