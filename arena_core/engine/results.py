"""The batch path's result: evaluations held as columns, built as objects only on access."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, overload

import numpy as np
from attrs import frozen

from arena_core.engine.batch import (
    STATUSES,
    CheckColumn,
)
from arena_core.model.protocols import DifficultyAdjuster
from arena_core.model.provenance import Provenance
from arena_core.model.records import CriterionResult, Evaluation, SuccessCriterion, Task, WeightProfile


@frozen(eq=False)
class EvaluationBatch(Sequence[Evaluation]):
    """Evaluations of many submissions, held as columns; indexing builds an :class:`Evaluation`.

    ``columns()`` gives the arrays (scores, ranks, percentiles) without building objects. Each
    array has one entry per submission, in input order.
    """

    size: int
    ids: Sequence[str]
    task_ids: Sequence[str]
    tools: Sequence[str | None]
    models: Sequence[str | None]
    overall: np.ndarray
    """Overall scores, adjusted for difficulty and rounded to 2 places."""
    unadjusted: np.ndarray
    raw_scores: Mapping[str, np.ndarray]
    """Dimension to unrounded scores (NaN where the dimension was left out)."""
    scores: Mapping[str, np.ndarray]
    parts: Mapping[str, np.ndarray]
    """Composite part (``token_efficiency``) to rounded scores."""
    ranks: np.ndarray
    percentiles: np.ndarray
    provisional: np.ndarray
    task_codes: np.ndarray
    """Per row, the index of its task in :attr:`task_list`."""
    task_list: Sequence[Task]
    profiles: Sequence[WeightProfile]
    """Per task, the weight profile it was scored with."""
    adjusters: Sequence[DifficultyAdjuster | None]
    criteria: Mapping[int, tuple[np.ndarray, list[tuple[SuccessCriterion, CheckColumn]]]]
    """``id(task)`` to (rows checked, each criterion with its verdicts on those rows)."""
    filled: Sequence[tuple[str, str, np.ndarray]]
    """(slot, policy, row mask) for each metric left out or filled in."""
    evaluated_at: str
    provenance: Provenance | None

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, index: int) -> Evaluation: ...

    @overload
    def __getitem__(self, index: slice) -> list[Evaluation]: ...

    def __getitem__(self, index: int | slice) -> Evaluation | list[Evaluation]:
        if isinstance(index, slice):
            return [self._build(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._build(index)

    def columns(self) -> dict[str, Any]:
        """Column name to array: ids, tool, model, overall and dimension scores (NaN where left
        out), ranks; and ``metric_scores``, a mapping of each composite part (``token_efficiency``)
        to its scores."""
        out: dict[str, Any] = {
            "submission_id": self.ids,
            "task_id": self.task_ids,
            "tool": self.tools,
            "model": self.models,
            "overall_score": self.overall,
            "unadjusted_overall_score": self.unadjusted,
        }
        out.update({f"{d}_score": v for d, v in self.scores.items()})
        out["metric_scores"] = dict(self.parts)
        out.update({"overall_ranking": self.ranks, "percentile": self.percentiles, "provisional": self.provisional})
        return out

    def _build(self, i: int) -> Evaluation:
        code = self.task_codes[i]
        profile = self.profiles[code]
        present = [d for d in profile.weights if not math.isnan(self.raw_scores[d][i])]
        weights: Mapping[str, float] = profile.weights
        if len(present) < len(profile.weights):
            kept = 0.0
            for d in present:
                kept += profile.weights[d]
            weights = {d: profile.weights[d] / kept for d in present}
        criteria: tuple[CriterionResult, ...] = ()
        verdicts = self.criteria.get(id(self.task_list[code]))
        if verdicts is not None:
            rows, columns = verdicts
            local = int(np.searchsorted(rows, i))
            criteria = tuple(_verdict(criterion, column, local) for criterion, column in columns)
        adjuster = self.adjusters[code]
        return Evaluation(
            submission_id=str(self.ids[i]),
            task_id=str(self.task_ids[i]),
            overall_score=float(self.overall[i]),
            scores={d: float(self.scores[d][i]) for d in present},
            weights=weights,
            weight_profile=profile.name,
            unadjusted_overall_score=float(self.unadjusted[i]),
            evaluated_at=self.evaluated_at,
            difficulty=adjuster.name if adjuster is not None else None,
            metric_scores={p: float(v[i]) for p, v in self.parts.items() if not math.isnan(v[i])},
            criteria=criteria,
            tool=self.tools[i],
            model=self.models[i],
            overall_ranking=int(self.ranks[i]),
            percentile=float(self.percentiles[i]),
            provisional=bool(self.provisional[i]),
            filled={slot: policy for slot, policy, mask in self.filled if mask[i]},
            provenance=self.provenance,
        )


def _verdict(criterion: SuccessCriterion, column: CheckColumn, row: int) -> CriterionResult:
    status = STATUSES[int(column.status[row])]
    reason = "" if status == "passed" else column.reason(row)
    return CriterionResult(criterion.type, status, float(column.credit[row]), criterion.weight, reason)  # type: ignore[arg-type]
