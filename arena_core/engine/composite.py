"""Metrics built from other metrics.

The spec's efficiency score is ``token * 0.5 + tool_call * 0.3 + iteration * 0.2``. Written
as a :class:`WeightedSum` over *slots*, each part can be swapped for another registered
algorithm by configuration (``metrics.token_efficiency = "token_efficiency_log"``) without
touching the composite.
"""

from __future__ import annotations

from collections.abc import Mapping

from attrs import field, frozen

from arena_core.model.protocols import Metric, Resolver, Score
from arena_core.model.records import Baseline, Submission, Task

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

    #: A composite needs nothing itself: each part checks its own inputs (and the engine
    #: applies the missing-telemetry policy to each part separately).
    requires: tuple[str, ...] = field(default=(), init=False)

    def bind(self, resolver: Resolver) -> WeightedSum:
        return WeightedSum(
            self.name, self.parts, tuple((slot, resolver.metric(slot), w) for slot, w in self.parts.items())
        )

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> Score | None:
        """The weighted sum; parts that were not measured (``None``) are left out and the
        remaining weights renormalised. ``None`` when no part was measured."""
        if not self.bound:
            raise RuntimeError(f"composite metric {self.name!r} was scored before it was bound")
        total = 0.0
        parts: dict[str, float] = {}
        filled: dict[str, str] = {}
        dropped = 0.0
        for slot, metric, weight in self.bound:
            result = metric.score(submission, task, baseline)
            if result is None:
                filled[slot] = "reweight"
                dropped += weight
                continue
            if isinstance(result, (float, int)):
                value = result
            else:
                value = result.value
                if result.filled:
                    filled.update(result.filled)
            parts[slot] = value
            total += value * weight
        if not parts:
            return None
        if dropped:
            kept = 0.0
            for slot, _, weight in self.bound:
                if slot in parts:
                    kept += weight
            total /= kept
        return Score(total, parts, filled=filled)
