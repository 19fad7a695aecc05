"""Task features for the item response fit (``--features category,difficulty,meta.KEY,created_at``).

A feature is read from each task's record: ``category``, ``difficulty`` (the label),
``created_at`` (as days, standardised) or ``meta.KEY``. A feature whose values are all numbers
is standardised (mean 0, standard deviation 1; a task without it gets 0 and an indicator
``NAME missing``); any other is categorical: one indicator per value but the most common one,
the reference its effects are measured against (a task without it has the value
``(none)``). There is no intercept: the difficulties' location is the abilities' (both
priors centred on 0), and a reference value's tasks are centred there. The effects, fitted with the difficulties
(:mod:`arena_core.stats.irtprior`), say how much harder a task of that value is, in logits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from attrs import frozen

from arena_core.model.checks import moment
from arena_core.model.errors import ValidationError
from arena_core.model.records import Task
from arena_core.stats import irt
from arena_core.stats.irtprior import effect_errors

__all__ = ["FeatureEffect", "FeatureMatrix", "feature_effects", "feature_matrix", "parse_features"]

_NONE = "(none)"


@frozen
class FeatureMatrix:
    """One row per task, one column per indicator or number, with the feature each came from."""

    columns: tuple[str, ...]
    """``category=debugging``, ``created_at``, ``meta.repo missing``, ..."""
    sources: tuple[str, ...]
    """The feature each column came from."""
    values: np.ndarray
    """``(tasks, columns)``."""
    levels: Mapping[str, tuple[str, ...]]
    """Each task's value of each feature, as text, by feature (for the similar tasks' reasons)."""


@frozen
class FeatureEffect:
    """How much a feature value moves a task's difficulty (logits; positive: harder)."""

    feature: str
    effect: float
    low: float
    high: float
    """95% interval of the effect."""


def parse_features(text: str | None) -> tuple[str, ...]:
    """``--features a,b,c`` as names, each checked."""
    names = tuple(n.strip() for n in (text or "").split(",") if n.strip())
    for name in names:
        if name not in ("category", "difficulty", "created_at") and not (name.startswith("meta.") and len(name) > 5):
            raise ValidationError("--features", name, "category, difficulty, created_at or meta.KEY", name)
    return names


def feature_matrix(tasks: Sequence[Task | None], names: Sequence[str]) -> FeatureMatrix:
    """The features ``names`` of ``tasks`` (``None``: a task with no record, every feature missing)."""
    columns: list[str] = []
    sources: list[str] = []
    blocks = [np.zeros((len(tasks), 0))]
    levels: dict[str, tuple[str, ...]] = {}
    for name in names:
        values = [_value(task, name) for task in tasks]
        levels[name] = tuple(
            _NONE
            if v is None
            else task.created_at[:10]
            if name == "created_at" and task and task.created_at
            else str(v)
            for task, v in zip(tasks, values, strict=True)
        )
        numbers = [v for v in values if v is not None]
        if numbers and all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers):
            present = np.array([v is not None for v in values])
            column = np.array([float(v) if v is not None else np.nan for v in values])
            sd = float(np.nanstd(column)) or 1.0
            blocks.append(np.where(present, (column - np.nanmean(column)) / sd, 0.0)[:, None])
            columns.append(name)
            sources.append(name)
            if not present.all():
                blocks.append((~present).astype(float)[:, None])
                columns.append(f"{name} missing")
                sources.append(name)
            continue
        counted = Counter(levels[name])
        reference = max(sorted(counted), key=lambda level: counted[level])
        for level in sorted(counted):
            if level != reference:
                blocks.append(np.array([v == level for v in levels[name]], dtype=float)[:, None])
                columns.append(f"{name}={level}")
                sources.append(name)
    return FeatureMatrix(tuple(columns), tuple(sources), np.hstack(blocks), levels)


def feature_effects(found: irt.IrtFit, features: FeatureMatrix, counts: np.ndarray) -> list[FeatureEffect]:
    """Each column's effect at the fit (resample 0), with its 95% interval."""
    a, p = found.discriminations[0], irt.probabilities(found)[0]
    information = (np.asarray(counts, dtype=float) * p * (1 - p)).sum(axis=0) * a * a
    errors = effect_errors(features.values, information, float(found.residual_sd[0]))
    return [
        FeatureEffect(name, float(found.effects[0, k]), float(found.effects[0, k] - irt.Z95 * errors[k]),
                      float(found.effects[0, k] + irt.Z95 * errors[k]))
        for k, name in enumerate(features.columns)
    ]  # fmt: skip


def _value(task: Task | None, name: str) -> Any:
    if task is None:
        return None
    if name == "category":
        return task.category
    if name == "difficulty":
        return task.difficulty
    if name == "created_at":
        when = moment(task.created_at) if task.created_at else None
        return None if when is None else when.timestamp() / 86_400
    value = task.meta.get(name.removeprefix("meta."))
    return value if value is None or isinstance(value, int | float | str | bool) else str(value)
