"""A batch's evaluations built as objects from its columns, a block of rows at a time.

An :class:`~arena_core.engine.results.EvaluationBatch` holds its evaluations as arrays, and
builds an :class:`~arena_core.model.records.Evaluation` when one is read. Reading a value out of
a NumPy array one row at a time costs more than the object it goes into: a row read a dozen
arrays, and building 5,000 evaluations took 20 us each where making the object takes 2.5. A
block's values are turned into Python lists once (``tolist``), and each row reads the lists.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from arena_core.engine.rowparts import kept_weights, verdicts
from arena_core.model.records import CriterionResult, Evaluation

if TYPE_CHECKING:
    from arena_core.engine.results import EvaluationBatch

__all__ = ["BLOCK", "evaluations_of"]

#: Rows built from one set of lists: a few hundred kilobytes of Python numbers at a time, so
#: iterating a batch of ten million evaluations never holds its columns as lists.
BLOCK = 4096


def evaluations_of(batch: EvaluationBatch, start: int, stop: int) -> list[Evaluation]:
    """The evaluations of the batch's rows ``start:stop``, each equal to the one the per-record
    path makes of its run (``tests/test_batch.py`` holds them equal, value and type)."""
    values = _lists(start, stop)
    codes = values(batch.task_codes)
    overall, unadjusted = values(batch.overall), values(batch.unadjusted)
    raw = {d: values(v) for d, v in batch.raw_scores.items()}
    scores = {d: values(v) for d, v in batch.scores.items()}
    parts = {p: values(v) for p, v in batch.parts.items()}
    ranks, percentiles = values(batch.ranks), values(batch.percentiles)
    provisional, coverage = values(batch.provisional), values(batch.coverage)
    filled = [(slot, policy, values(mask)) for slot, policy, mask in batch.filled]
    criteria = _criteria(batch, start, codes)
    made = []
    for k, i in enumerate(range(start, stop)):
        code = codes[k]
        profile = batch.profiles[code]
        present = [d for d in profile.weights if not math.isnan(raw[d][k])]
        weights = (
            profile.weights
            if len(present) == len(profile.weights)
            else kept_weights(profile.weights, present, batch.gate)
        )
        adjuster = batch.adjusters[code]
        made.append(
            Evaluation(
                submission_id=str(batch.ids[i]),
                task_id=str(batch.task_ids[i]),
                overall_score=overall[k],
                scores={d: scores[d][k] for d in present},
                weights=weights,
                weight_profile=profile.name,
                unadjusted_overall_score=unadjusted[k],
                evaluated_at=batch.evaluated_at,
                difficulty=adjuster.name if adjuster is not None else None,
                metric_scores={p: v[k] for p, v in parts.items() if not math.isnan(v[k])},
                criteria=criteria[k],
                tool=batch.tools[i],
                model=batch.models[i],
                overall_ranking=ranks[k],
                percentile=percentiles[k],
                provisional=provisional[k],
                filled={slot: policy for slot, policy, mask in filled if mask[k]},
                coverage=coverage[k],
                provenance=batch.provenance,
            )
        )
    return made


def _lists(start: int, stop: int) -> Callable[[np.ndarray], list[Any]]:
    """What reads an array's rows ``start:stop`` as a list of Python values: one ``tolist`` of a
    block, or one ``item`` for a single row (indexing a batch), which a slice made slower."""
    if stop - start == 1:
        return lambda array: [array.item(start)]
    return lambda array: array[start:stop].tolist()


def _criteria(batch: EvaluationBatch, start: int, codes: list[int]) -> list[tuple[CriterionResult, ...]]:
    """Each row's criterion results, for the block of rows from ``start`` whose tasks are
    ``codes``: the rows of tasks checked together are looked up among the checked rows at once,
    and each criterion's verdicts read for all of them (read a row at a time, these were most
    of an evaluation's time)."""
    found: list[tuple[CriterionResult, ...]] = [()] * len(codes)
    together: dict[int, list[int]] = {}  # id of the task's checks (tasks with equal criteria share them) -> rows
    for k, code in enumerate(codes):
        together.setdefault(id(batch.task_list[code]), []).append(k)
    for key, rows in together.items():
        checks = batch.criteria.get(key)
        if checks is None:
            continue
        checked, columns = checks
        local = checked.searchsorted(np.array(rows) + start)
        results = [verdicts(criterion, column, local) for criterion, column in columns]
        for j, k in enumerate(rows):
            found[k] = tuple(of_criterion[j] for of_criterion in results)
    return found
