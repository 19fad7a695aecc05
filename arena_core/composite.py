"""Metrics built from other metrics.

The spec's efficiency score is ``token * 0.5 + tool_call * 0.3 + iteration * 0.2``. Written
as a :class:`WeightedSum` over *slots*, each part can be swapped for another registered
algorithm by configuration (``metrics.token_efficiency = "token_efficiency_log"``) without
touching the composite.
"""

from __future__ import annotations

from collections.abc import Mapping

from attrs import field, frozen

from arena_core.interfaces import Metric, Resolver, Score
from arena_core.models import Baseline, Submission, Task

__all__ = ["WeightedSum"]


@frozen
class WeightedSum:
    """A metric whose score is the weighted sum of other metrics' scores.

    Parts are added in the order given, as the spec writes its sums, so results match it to
    the last bit.
    """

    name: str
    """The composite's registered name."""
    parts: Mapping[str, float]
    """Slot name to weight; each slot is resolved to a metric when the composite is bound."""
    bound: tuple[tuple[str, Metric, float], ...] = field(default=(), repr=False)
    """(slot, metric, weight) once bound; empty on the registered, unbound component."""

    @property
    def requires(self) -> tuple[str, ...]:
        """Every field a part requires."""
        return tuple(dict.fromkeys(f for _, metric, _ in self.bound for f in metric.requires))

    def bind(self, resolver: Resolver) -> WeightedSum:
        return WeightedSum(
            self.name, self.parts, tuple((slot, resolver.metric(slot), w) for slot, w in self.parts.items())
        )

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> Score:
        if not self.bound:
            raise RuntimeError(f"composite metric {self.name!r} was scored before it was bound")
        total = 0.0
        parts: dict[str, float] = {}
        for slot, metric, weight in self.bound:
            result = metric.score(submission, task, baseline)
            value = result if isinstance(result, float | int) else result.value
            parts[slot] = value
            total += value * weight
        return Score(total, parts)
