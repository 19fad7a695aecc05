"""Scoring many submissions as columns: every metric once per weight profile, then adjusters, rounding, ranks."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from arena_core.engine.baselinetable import figures_of
from arena_core.engine.batch import (
    Batch,
    Recorder,
    WeightedTotal,
    batch_blocker,
    check_range,
    scatter,
    score_batch,
)
from arena_core.engine.columns import Columns, factorize
from arena_core.engine.coverage import coverage_column
from arena_core.engine.gating import UNSOLVED, gate_column
from arena_core.engine.ordered import split_by_code
from arena_core.engine.plans import TaskPlans, task_plans
from arena_core.engine.results import EvaluationBatch
from arena_core.engine.rounding import round_exact
from arena_core.model.errors import PluginError, ValidationError
from arena_core.model.records import Baseline, Task, WeightProfile

if TYPE_CHECKING:
    from arena_core.engine.scoring import Scorer


#: Rows a metric scores at a time, when each task's rows are consecutive: eight columns of
#: 65,536 doubles fit a core's 2 MiB cache, and a partition of 500,000 runs (benchmarks/scale.py's,
#: its tasks all of one category) is scored a fifth faster in blocks than whole (0.21 s, 0.27 s).
BLOCK_ROWS = 1 << 16


def batch_reason(scorer: Scorer, tasks: Sequence[Task], plans: TaskPlans | None = None) -> str | None:
    """Why ``tasks`` cannot be scored by the batch path (the first component in use without a
    batch form, named), or ``None`` when they can. ``plans``: the tasks' plans, when the caller
    has them already."""
    for profile, members in (plans or task_plans(scorer, tasks)).tasks_by_profile(tasks):
        for dimension in profile.weights:
            reason = batch_blocker(scorer.metric(dimension), members)
            if reason is not None:
                return reason
    return None


def evaluate_columns(
    scorer: Scorer,
    columns: Columns,
    task_list: Sequence[Task],
    task_codes: np.ndarray,
    baselines: Sequence[Baseline],
    baseline_codes: np.ndarray,
    provisional_minimum: int,
    stamp: str,
    plans: TaskPlans | None = None,
    unsolved: np.ndarray | None = None,
) -> EvaluationBatch | None:
    """Score, rank and mark every row; ``None`` when some component in use has no batch form.

    :param task_codes: per row, the index of its task in ``task_list``.
    :param baseline_codes: per row, the index of its baseline in ``baselines``.
    :param plans: the tasks' plans, when the caller has them already.
    :param unsolved: under a ``gate``, per row, whether no run of its task passed the gate (see
        :mod:`arena_core.engine.gating`): its other dimensions are left out.
    """
    plans = plans or task_plans(scorer, task_list)
    if batch_reason(scorer, task_list, plans) is not None:
        return None
    # One value per baseline, not per row: a million rows would hold 17 figures each (136 MB).
    per_baseline = figures_of(baselines)
    recorder = Recorder()
    n = columns.size
    overall, overall_rounded = np.empty(n), np.empty(n)  # every row is in one block, which writes both
    raw_scores: dict[str, np.ndarray] = {}
    rounded: dict[str, np.ndarray] = {}
    parts: dict[str, np.ndarray] = {}
    shapes = list(_by_shape(plans.distinct_profiles, plans.profile_codes[task_codes]))
    # A dimension every row's profile weighs is written on every row: its columns need no NaN first.
    everywhere = set.intersection(*(set(shape[0]) for shape in shapes)) if shapes else set()
    for dimensions, rows, weights in _blocks(shapes, task_codes):
        recorder.begin_block()
        batch = Batch(columns, rows, per_baseline, task_list, task_codes, recorder, baselines, baseline_codes)
        summed = WeightedTotal(len(rows))
        gated = scorer.gate if scorer.gate in dimensions else None
        credit, gate_values = None, np.zeros(0)
        left_out = np.zeros(len(rows), dtype=bool)  # no run of the row's task passed the gate
        if gated is not None:
            gate_values = gate_column(_scored(scorer, gated, batch, parts))
            credit = np.where(np.isnan(gate_values), 1.0, gate_values / 100.0)
            if unsolved is not None:
                left_out = unsolved[rows]
        for dimension, weight in zip(dimensions, weights, strict=True):
            if dimension == gated:
                values = gate_values
            elif credit is not None and left_out.any():
                batch.note_filled(dimension, UNSOLVED, left_out)
                values = np.full(len(rows), np.nan)
                scored = np.flatnonzero(~left_out)
                if len(scored):
                    values[scored] = _scored(scorer, dimension, batch.subset(scored), parts) * credit[scored]
            else:
                values = _scored(scorer, dimension, batch, parts)
                if credit is not None:
                    values = values * credit
            whole = dimension in everywhere
            raw_scores[dimension] = scatter(raw_scores.get(dimension), batch, values, everywhere=whole)
            rounded[dimension] = scatter(rounded.get(dimension), batch, round_exact(values, 2), everywhere=whole)
            measured = summed.add(values, weight)
            if measured is not None:
                batch.note_filled(dimension, "reweight", ~measured & ~(left_out & (dimension != gated)))
        block_overall = (
            summed.total
            if summed.complete == len(dimensions)
            else _reweighted(batch, summed, dimensions, gate_values if gated else None)
        )
        scatter(overall, batch, block_overall)
        adjusted = _adjusted(plans, batch.task_codes(), block_overall)
        scatter(overall_rounded, batch, round_exact(adjusted, 2))
    tool_codes, distinct_tools = columns.codes("tools")
    pair = task_codes * max(len(distinct_tools), 1) + tool_codes
    counts = np.bincount(pair)[pair] if n else pair
    return EvaluationBatch(
        size=n,
        ids=columns.ids,
        task_ids=columns.task_ids,
        tools=columns.tools,
        models=columns.models,
        overall=overall_rounded,
        raw_unadjusted=overall,
        raw_scores=raw_scores,
        scores=rounded,
        raw_parts=parts,
        provisional=counts < provisional_minimum,
        task_codes=task_codes,
        task_list=task_list,
        profiles=plans.profiles,
        adjusters=plans.adjusters,
        criteria=recorder.criteria,
        filled=recorder.filled,
        coverage=coverage_column(
            recorder.filled, plans.profile_codes[task_codes], [scorer.shares(p.name) for p in plans.distinct_profiles]
        ),
        evaluated_at=stamp,
        provenance=scorer.provenance,
        gate=scorer.gate,
    )


def _reweighted(
    batch: Batch, summed: WeightedTotal, dimensions: tuple[str, ...], gate_values: np.ndarray | None
) -> np.ndarray:
    """The overall score of rows that lack some dimension: the weighted mean of those they have,
    or, under a gate, the total with what was left out falling to the gate."""
    measured_count = summed.measured()
    if not summed.complete and (measured_count == 0).any():
        row = batch.ids(np.flatnonzero(measured_count == 0)[:1])[0]
        raise ValidationError(
            f"submission {row!r}", "(record)", "at least one measured metric; every metric was left out"
        )
    with np.errstate(all="ignore"):
        reweighted = summed.total / summed.kept
    if gate_values is not None:
        falls = ~np.isnan(gate_values)
        reweighted = np.where(falls, summed.total + gate_values * summed.dropped, reweighted)
    overall: np.ndarray = np.where(measured_count < len(dimensions), reweighted, summed.total)
    return overall


def _adjusted(plans: TaskPlans, task_codes: np.ndarray, overall: np.ndarray) -> np.ndarray:
    """The overall scores of rows of the tasks ``task_codes`` adjusted for difficulty: each
    task's adjuster over its rows (a task without a difficulty keeps its score)."""
    adjusted = overall.copy()
    distinct_adjusters = plans.distinct_adjusters
    for code, local in split_by_code(plans.adjuster_codes[task_codes]):
        adjuster = distinct_adjusters[code]
        if adjuster is None:
            continue
        batch_form = getattr(adjuster, "adjust_batch", None)
        scores = overall[local]
        adjusted[local] = batch_form(scores) if batch_form else [adjuster.adjust(float(v)) for v in scores]
    return adjusted


def _by_shape(
    profiles: Sequence[WeightProfile], row_profiles: np.ndarray
) -> Iterator[tuple[tuple[str, ...], np.ndarray, list[float | np.ndarray]]]:
    """The rows gathered by the dimensions their profile weighs, in its order: (those dimensions,
    the rows, each dimension's weight, one number or one per row). Metrics do not depend on the
    profile, so five categories weighing the spec's four dimensions are scored in one pass over
    their rows (not a gather of each category's) and differ only in the weights each row's sum
    multiplies by: the same operations, in the same order, as a pass per profile."""
    shapes = [tuple(p.weights) for p in profiles]
    shape_codes, distinct = factorize(shapes)
    for code, rows in split_by_code(shape_codes[row_profiles]):
        dimensions = distinct[code]
        members = row_profiles if len(rows) == len(row_profiles) else row_profiles[rows]  # one shape: every row
        weights: list[float | np.ndarray] = []
        for dimension in dimensions:
            table = np.array([p.weights.get(dimension, 0.0) for p in profiles])
            used = table[shape_codes == code]
            weights.append(float(used[0]) if (used == used[0]).all() else table[members])
        yield dimensions, rows, weights


def _blocks(
    shapes: Iterable[tuple[tuple[str, ...], np.ndarray, list[float | np.ndarray]]], task_codes: np.ndarray
) -> Iterator[tuple[tuple[str, ...], np.ndarray, list[float | np.ndarray]]]:
    """Each shape's rows in blocks of whole tasks of about :data:`BLOCK_ROWS` rows, when each
    task's rows are consecutive (as a partition of clustered runs, or one sorted by task, holds them):
    a block's columns are views, and what a metric computes of them stays in the cache. Rows
    are independent, so the scores are the same in blocks or whole."""
    for dimensions, rows, weights in shapes:
        codes = task_codes[rows]
        starts = np.flatnonzero(codes[1:] != codes[:-1]) + 1  # where each run of a task after the first begins
        if len(rows) < 2 * BLOCK_ROWS or len(np.unique(codes[np.r_[0, starts]])) <= len(starts):  # a task in two runs
            yield dimensions, rows, weights
            continue
        found = np.searchsorted(starts, np.arange(BLOCK_ROWS, len(rows), BLOCK_ROWS))
        cuts = np.unique(np.r_[0, starts[found[found < len(starts)]], len(rows)]).tolist()
        for low, high in pairwise(cuts):
            yield dimensions, rows[low:high], [w if isinstance(w, float) else w[low:high] for w in weights]


def _scored(scorer: Scorer, dimension: str, batch: Batch, parts: dict[str, np.ndarray]) -> np.ndarray:
    """The dimension's metric over the batch's rows, checked to lie in 0-100."""
    metric = scorer.metric(dimension)
    try:
        values = score_batch(metric, batch, dimension, parts)
    except (ValidationError, PluginError):
        raise
    except Exception as exc:
        raise PluginError(
            f"metric {metric.name!r} ({scorer._owner(metric)}) failed in its batch form: {exc!r}"
        ) from exc
    check_range(values, metric, batch, scorer._owner(metric))
    return values
