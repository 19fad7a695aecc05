"""The batch path's result: evaluations held as columns, built as objects only on access."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from arena_core.engine.batch import (
    STATUSES,
    CheckColumn,
)
from arena_core.model.records import CriterionResult, Evaluation, SuccessCriterion


class EvaluationBatch(Sequence[Evaluation]):
    """Evaluations of many submissions, held as columns; indexing builds an :class:`Evaluation`.

    ``columns()`` gives the arrays (scores, ranks, percentiles) without building objects.
    """

    def __init__(self, **state: Any) -> None:
        self.__dict__.update(state)

    def __len__(self) -> int:
        return self.size  # type: ignore[attr-defined,no-any-return]

    def __getitem__(self, index):  # type: ignore[no-untyped-def,override]
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
            "task_id": self.task_ids,  # type: ignore[attr-defined]
            "tool": self.tools,
            "model": self.models,  # type: ignore[attr-defined]
            "overall_score": self.overall,
            "unadjusted_overall_score": self.unadjusted,  # type: ignore[attr-defined]
        }
        out.update({f"{d}_score": v for d, v in self.scores.items()})  # type: ignore[attr-defined]
        out["metric_scores"] = dict(self.parts)  # type: ignore[attr-defined]
        out.update({"overall_ranking": self.ranks, "percentile": self.percentiles, "provisional": self.provisional})  # type: ignore[attr-defined]
        return out

    def _build(self, i: int) -> Evaluation:
        s = self.__dict__
        code = s["task_codes"][i]
        profile = s["profiles"][code]
        present = [d for d in profile.weights if not math.isnan(s["raw_scores"][d][i])]
        if len(present) < len(profile.weights):
            kept = 0.0
            for d in present:
                kept += profile.weights[d]
            weights = {d: profile.weights[d] / kept for d in present}
        else:
            weights = profile.weights
        criteria: tuple[CriterionResult, ...] = ()
        task = s["task_list"][code]
        verdicts = s["criteria"].get(id(task))
        if verdicts is not None:
            rows, columns = verdicts
            local = int(np.searchsorted(rows, i))
            criteria = tuple(_verdict(criterion, column, local) for criterion, column in columns)
        adjuster = s["adjusters"][code]
        return Evaluation(
            submission_id=str(s["ids"][i]),
            task_id=str(s["task_ids"][i]),
            overall_score=float(s["overall"][i]),
            scores={d: float(s["scores"][d][i]) for d in present},
            weights=weights,
            weight_profile=profile.name,
            unadjusted_overall_score=float(s["unadjusted"][i]),
            evaluated_at=s["evaluated_at"],
            difficulty=adjuster.name if adjuster is not None else None,
            metric_scores={p: float(v[i]) for p, v in s["parts"].items() if not math.isnan(v[i])},
            criteria=criteria,
            tool=s["tools"][i],
            model=s["models"][i],
            overall_ranking=int(s["ranks"][i]),
            percentile=float(s["percentiles"][i]),
            provisional=bool(s["provisional"][i]),
            filled={slot: policy for slot, policy, mask in s["filled"] if mask[i]},
            provenance=s["provenance"],
        )


def _verdict(criterion: SuccessCriterion, column: CheckColumn, row: int) -> CriterionResult:
    status = STATUSES[int(column.status[row])]
    reason = "" if status == "passed" else column.reason(row)
    return CriterionResult(criterion.type, status, float(column.credit[row]), criterion.weight, reason)  # type: ignore[arg-type]
