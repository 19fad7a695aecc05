"""Pareto fronts: which groups no other group beats on both a cost and a quality at once.

A weighted overall score trades cost against correctness at one fixed rate; a Pareto front
makes no such choice. Each group is placed at its mean cost (``x``, lower is better: dollars,
seconds or tokens per run) and its mean quality (``y``, higher is better: the correctness or
overall score), both means over tasks of its per-task means. A group is on the front when no
other group is at least as good on both and better on one; otherwise the groups that
dominate it are named. A group whose runs never measured ``x`` cannot be placed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from attrs import frozen

from arena_core.model.errors import ValidationError
from arena_core.stats.tasktable import Runs, TaskTable, measured_mean

__all__ = ["X_FIELDS", "Y_SCORES", "ParetoPoint", "check_axes", "pareto"]

#: ``--x`` to the submission field it averages.
X_FIELDS = {"cost": "estimated_cost", "time": "execution_time", "tokens": "total_tokens"}
#: ``--y`` to the score it averages.
Y_SCORES = ("correctness", "overall")


@frozen
class ParetoPoint:
    """One group's place: means over tasks with their Student-t intervals (``None`` below 2 tasks)."""

    group: str
    n_tasks: int
    x: float | None
    """``None`` when no run of the group measured it."""
    x_low: float | None
    x_high: float | None
    y: float
    y_low: float | None
    y_high: float | None
    on_front: bool
    dominated_by: list[str]
    """Groups at least as good on both axes and better on one, best ``y`` first."""


def pareto(runs: Runs, x_values: np.ndarray, y: str, confidence_level: float = 0.95) -> list[ParetoPoint]:
    """Every group of ``runs``, front first (by ``x``), then the others by ``y``.

    :param x_values: the figure per run (NaN where not measured), aligned with ``runs``.
    :param y: ``correctness`` (the dimension's score) or ``overall``.
    """
    quality = runs.overall if y == "overall" else runs.dimensions.get(y, np.full(len(runs.overall), np.nan))
    table = TaskTable.of(
        Runs(runs.ids, runs.groups, runs.tasks, runs.overall, {"x": x_values, "y": quality}, runs.coverage)
    )
    xs, ys = table.dimension_means["x"], table.dimension_means["y"]
    points = []
    for g, group in enumerate(table.groups):
        x_tasks, y_tasks = xs[g][~np.isnan(xs[g])], ys[g][~np.isnan(ys[g])]
        points.append((group, int(table.present[g].sum()), x_tasks, y_tasks))
    placed = [(name, measured_mean(xt), measured_mean(yt)) for name, _, xt, yt in points if len(xt) and len(yt)]
    rows = []
    for name, n_tasks, x_tasks, y_tasks in points:
        x, y_mean = measured_mean(x_tasks), measured_mean(y_tasks)
        dominated = sorted(
            (other for other in placed if other[0] != name and len(x_tasks) and _dominates(other[1:], (x, y_mean))),
            key=lambda o: (-o[2], o[1], o[0]),
        )
        rows.append(
            ParetoPoint(
                group=name,
                n_tasks=n_tasks,
                x=None if math.isnan(x) else x,
                x_low=_t_bound(x_tasks, confidence_level, -1),
                x_high=_t_bound(x_tasks, confidence_level, 1),
                y=y_mean,
                y_low=_t_bound(y_tasks, confidence_level, -1),
                y_high=_t_bound(y_tasks, confidence_level, 1),
                on_front=bool(len(x_tasks) and len(y_tasks) and not dominated),
                dominated_by=[o[0] for o in dominated],
            )
        )
    return sorted(rows, key=lambda r: (not r.on_front, r.x if r.on_front and r.x is not None else 0.0, -r.y, r.group))


def check_axes(x: str, y: str) -> None:
    """Refuse axes that are not :data:`X_FIELDS` and :data:`Y_SCORES`, naming the choices."""
    if x not in X_FIELDS:
        raise ValidationError("pareto", "x", " or ".join(X_FIELDS), x)
    if y not in Y_SCORES:
        raise ValidationError("pareto", "y", " or ".join(Y_SCORES), y)


def _dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """``a`` = (x, y) dominates ``b``: no more cost, no less quality, strictly better on one."""
    return a[0] <= b[0] and a[1] >= b[1] and (a[0] < b[0] or a[1] > b[1])


def _t_bound(values: np.ndarray, confidence_level: float, side: int) -> float | None:
    """One end of the Student-t interval of the mean of ``values`` (not clipped: costs are not
    scores); ``None`` below 2 values."""
    if len(values) < 2:
        return None
    from scipy.stats import t as student_t

    half = float(student_t.ppf((1 + confidence_level) / 2, len(values) - 1)) * float(np.std(values, ddof=1))
    return measured_mean(values) + side * half / math.sqrt(len(values))
