"""How much of an overall score rests on measured figures.

A missing figure is either filled in (``neutral``: scored 50) or left out (``reweight``: the
remaining weights renormalised); either way the overall score says less than one built from
measurements. An evaluation's *coverage* is the share of its profile's weight whose metrics
were measured: 1 when nothing was missing, 0.8 when a dimension weighing 20% was filled in.
A part of a composite metric (``token_efficiency`` in ``efficiency``) carries its share of
the composite's weight.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from arena_core.engine.composite import WeightedSum
from arena_core.engine.telemetry import Guarded
from arena_core.model.protocols import Metric
from arena_core.model.records import WeightProfile

__all__ = ["coverage", "coverage_column", "slot_shares"]


def slot_shares(profile: WeightProfile, metric_for: Callable[[str], Metric]) -> dict[str, tuple[str, float]]:
    """Slot (a dimension, or a part of a composite) to (its dimension, its share of the
    profile's total weight)."""
    total = sum(profile.weights.values())
    shares: dict[str, tuple[str, float]] = {}
    for dimension, weight in profile.weights.items():
        share = weight / total
        shares[dimension] = (dimension, share)
        metric = metric_for(dimension)
        inner = metric.inner if isinstance(metric, Guarded) else metric
        if isinstance(inner, WeightedSum):
            parts = sum(inner.parts.values())
            for slot, part_weight in inner.parts.items():
                shares.setdefault(slot, (dimension, share * part_weight / parts))
    return shares


def coverage(filled: Mapping[str, str], shares: Mapping[str, tuple[str, float]]) -> float:
    """The share of the weight measured, given the slots filled in or left out. A part of a
    dimension that is itself filled is not counted twice."""
    missing = 0.0
    for slot in filled:
        dimension, share = shares.get(slot, (slot, 0.0))
        if dimension == slot or dimension not in filled:
            missing += share
    return round(max(0.0, 1.0 - missing), 4)


def coverage_column(
    filled: Sequence[tuple[str, str, np.ndarray]],
    row_profiles: np.ndarray,
    shares: Sequence[Mapping[str, tuple[str, float]]],
) -> np.ndarray:
    """:func:`coverage` of every row of a batch: ``filled`` holds (slot, policy, row mask)
    entries, ``row_profiles`` each row's index into ``shares`` (one table per weight profile)."""
    masks: dict[str, np.ndarray] = {}
    for slot, _, mask in filled:
        masks[slot] = masks[slot] | mask if slot in masks else mask.copy()
    out = np.ones(len(row_profiles))  # a row nothing was filled in for measured everything
    if not masks:
        return out
    rows = np.flatnonzero(np.logical_or.reduce(list(masks.values())))  # only these can lack a share
    profiles = row_profiles[rows]
    masks = {slot: mask[rows] for slot, mask in masks.items()}
    missing = np.zeros(len(rows))
    for slot, mask in masks.items():
        entries = [table.get(slot, (slot, 0.0)) for table in shares]  # per profile: (dimension, share)
        counted = mask.copy()
        for other, other_mask in masks.items():
            if other == slot:
                continue
            within = [dimension == other for dimension, _ in entries]  # per profile, not per row
            if any(within):
                counted &= ~(np.array(within)[profiles] & other_mask)
        missing[counted] += np.array([share for _, share in entries])[profiles][counted]
    out[rows] = np.round(np.maximum(0.0, 1.0 - missing), 4)
    return out
