"""How much better a model does on problems published before its cutoff: the naive gap, and the
gap adjusted for problems getting harder over time.

A model's mean score on the problems published before its knowledge cutoff minus its mean on
those published after (the **naive gap**) mixes two things: what it may have seen in training,
and how the problems changed over time (later contests are often harder). Models whose cutoff
precedes every problem (the **reference** models) saw none of them, so their own before/after
difference is the drift alone. The **adjusted gap** takes each problem's reference score away
from the model's before comparing the two periods:

    adjusted = mean over before-problems of (s_m,t - r_t) - mean over after-problems of (s_m,t - r_t)

where ``s_m,t`` is the model's mean score on problem ``t`` and ``r_t`` the reference models'
mean on it: a difference in differences with a term per problem. It is unbiased for the
contamination effect when the drift affects the model and the references alike (additively on
the score's scale); it says nothing of problems no reference model ran, which it leaves out.
The interval resamples the problems of each period (a percentile bootstrap, seeded).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from attrs import frozen

from arena_core.model.releases import after
from arena_core.stats.tasktable import TaskTable

__all__ = ["Gap", "contamination", "reference_models"]


@frozen
class Gap:
    """One model's before/after comparison."""

    model: str
    date: str
    """The date its window starts after (its knowledge cutoff, or release)."""
    before_tasks: int
    after_tasks: int
    before: float
    """Its mean per-problem score on the problems published up to ``date``."""
    after: float
    naive: float
    """``before - after``."""
    adjusted: float
    """The same over the problems the references ran, each less the references' mean on it."""
    ci_low: float
    ci_high: float
    """The adjusted gap's bootstrap interval (problems resampled within each period)."""
    note: str = ""
    """Why a figure is missing (NaN), when one is."""


def reference_models(dates: Mapping[str, str], created: Mapping[str, str]) -> list[str]:
    """The models whose date precedes every problem's publication: they cannot have seen any."""
    return sorted(m for m, date in dates.items() if all(after(c, date) for c in created.values()))


def contamination(
    table: TaskTable,
    scores: np.ndarray,
    created: Mapping[str, str],
    dates: Mapping[str, str],
    references: Sequence[str],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> list[Gap]:
    """Each dated model's gap (the references' own included, which estimate 0 by construction).

    :param scores: ``(groups, tasks)`` of ``table``: each model's mean score on each problem
        (NaN where it ran none).
    :param created: problem id to its publication date; problems without one are left out.
    :param dates: model to the date its window starts after.
    :param references: the reference models (:func:`reference_models`, or named).
    """
    columns = [i for i, t in enumerate(table.tasks) if t in created]
    rows = {g: i for i, g in enumerate(table.groups)}
    s = scores[:, columns]
    tasks = [table.tasks[i] for i in columns]
    with np.errstate(invalid="ignore"):
        reference = np.nanmean(s[[rows[r] for r in references]], axis=0) if references else np.full(len(tasks), np.nan)
    rng = np.random.default_rng(seed)
    gaps = []
    for model in sorted(m for m in dates if m in rows):
        mine = s[rows[model]]
        later = np.array([after(created[t], dates[model]) for t in tasks], dtype=bool)
        ran = ~np.isnan(mine)
        early_scores, late_scores = mine[ran & ~later], mine[ran & later]
        naive_before = float(early_scores.mean()) if early_scores.size else math.nan
        naive_after = float(late_scores.mean()) if late_scores.size else math.nan
        both = ran & ~np.isnan(reference)
        early, late = (mine - reference)[both & ~later], (mine - reference)[both & later]
        note = ""
        if not early_scores.size or not late_scores.size:
            note = f"no problem published {'before' if not early_scores.size else 'after'} {dates[model]}"
        elif not references:
            note = "no reference model: every model's date falls within the problems' dates"
        elif not early.size or not late.size:
            note = "the reference models ran no problem of one period"
        adjusted, low, high = math.nan, math.nan, math.nan
        if not note:
            adjusted = float(early.mean() - late.mean())
            draws = _resampled_means(early, rng, resamples) - _resampled_means(late, rng, resamples)
            low, high = (float(q) for q in np.quantile(draws, [(1 - confidence) / 2, (1 + confidence) / 2]))
        gaps.append(Gap(model, dates[model], int(early_scores.size), int(late_scores.size), naive_before,
                        naive_after, naive_before - naive_after, adjusted, low, high, note))  # fmt: skip
    return gaps


def _resampled_means(values: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """Means of ``resamples`` resamples of ``values`` with replacement, drawn by chunks (bounded memory)."""
    found = np.empty(resamples)
    chunk = max(1, 2_000_000 // max(1, values.size))
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        found[start:stop] = values[rng.integers(0, values.size, size=(stop - start, values.size))].mean(axis=1)
    return found
