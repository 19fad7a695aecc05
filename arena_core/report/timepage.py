"""The report's time page: each model's score against its release date with the frontier, and
the contamination gaps (docs/time.md), where the tasks and models have the dates they need."""

from __future__ import annotations

import math
from collections.abc import Mapping
from html import escape

from arena_core.model.records import Task
from arena_core.model.releases import ModelDates
from arena_core.report.charts import trend_svg
from arena_core.report.html import table
from arena_core.stats.contamination import contamination, reference_models
from arena_core.stats.tasktable import TaskTable
from arena_core.stats.trend import trend, years_of

__all__ = ["time_page"]


def time_page(table_: TaskTable, tasks: Mapping[str, Task], models: Mapping[str, ModelDates]) -> str | None:
    """The page's body for a board grouped by model, or ``None`` when no two models have a
    release date (nothing to plot) and no task has a ``created_at``."""
    scores = table_.dimension_means.get("correctness")
    y_label = "correctness (%)"
    if scores is None:
        scores, y_label = table_.means, "score"
    released = {g: d for g in table_.groups if g in models and (d := models[g].release_date) is not None}
    created = {t: task.created_at for t, task in tasks.items() if task.created_at is not None}
    parts = []
    if len(released) >= 2:
        found = trend(table_.groups, scores, released, resamples=500)
        points = [(p.group, years_of(p.x), p.y, p.on_frontier) for p in found.points]
        slope = "n/a" if math.isnan(found.slope) else f"{found.slope:+.2f} points a year"
        interval = "" if math.isnan(found.ci_low) else f" (95% CI {found.ci_low:+.2f} to {found.ci_high:+.2f})"
        listed = [[k, p.x, p.group, p.n_tasks, p.y, "yes" if p.on_frontier else ""]
                  for k, p in enumerate(found.points, start=1)]  # fmt: skip
        parts.append(
            f"<h2>Against release dates</h2><p>Each model's mean {escape(y_label)} over its tasks at its release "
            f"date, numbered as in the table below; the frontier (models that beat every model released before "
            f"them) is joined: {slope}{interval}, the tasks resampled.</p>"
            + trend_svg(points, y_label)
            + table(["#", "Release", "Model", "Tasks", escape(y_label.capitalize()), "Frontier"], listed)
        )
    cutoffs = {g: d for g in table_.groups if g in models and (d := models[g].knowledge_cutoff) is not None}
    dates, field = (cutoffs, "knowledge cutoff") if cutoffs else (released, "release")
    if created and dates:
        references = reference_models(dates, created)
        gaps = contamination(table_, scores, created, dates, references, resamples=1000)
        rows = [
            [g.model, g.date, g.before_tasks, g.after_tasks, _shown(g.naive), _shown(g.adjusted),
             "" if math.isnan(g.ci_low) else f"{g.ci_low:.2f} to {g.ci_high:.2f}", g.note]
            for g in gaps
        ]  # fmt: skip
        header = [escape(field.capitalize()), "Model", "Before", "After", "Naive gap", "Adjusted gap", "95% CI", "Note"]
        parts.append(
            f"<h2>Before and after each model's {field}</h2><p>The naive gap is a model's mean on the tasks "
            f"created up to its {field} minus its mean on those created after; the adjusted gap takes away, "
            "task by task, the reference models' mean (models dated before every task, which saw neither "
            f"period): references {escape(', '.join(references) or 'none')}.</p>"
            + table(header, [[r[1], r[0], *r[2:]] for r in rows])
        )
    return "".join(parts) or None


def _shown(value: float) -> float | None:
    return None if math.isnan(value) else value
