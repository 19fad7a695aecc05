"""The batch path's result: evaluations held as columns, built as objects only on access."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar, overload

import numpy as np
from attrs import frozen

from arena_core.engine.batch import (
    STATUSES,
    CheckColumn,
)
from arena_core.model.protocols import DifficultyAdjuster
from arena_core.model.provenance import Provenance
from arena_core.model.records import CriterionResult, Evaluation, SuccessCriterion, Task, WeightProfile
from arena_core.model.serde import to_dict


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

    #: Which path scored these: always the batch path here (see :class:`EvaluationList`).
    path: ClassVar[str] = "batch"
    #: Why the per-record path ran instead: never, here.
    fallback_reason: ClassVar[str | None] = None

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

    def dimensions(self) -> list[str]:
        """The dimensions scored, in the order they first appear going through the evaluations
        (as a writer listing every evaluation's ``scores`` would meet them)."""
        first: list[tuple[int, int, str]] = []
        for dimension, raw in self.raw_scores.items():
            present = np.flatnonzero(~np.isnan(raw))
            if len(present):
                row = int(present[0])
                order = list(self.profiles[self.task_codes[row]].weights)
                first.append((row, order.index(dimension), dimension))
        return [d for _, _, d in sorted(first)]

    def records(self, *, provenance: bool = True) -> Iterator[dict[str, Any]]:
        """Each evaluation as :func:`~arena_core.model.serde.to_dict` gives it, in order, built
        from the arrays without an :class:`Evaluation` per submission (for writing files).

        :param provenance: include ``provenance`` (the same for every record; a writer that
            encodes it once and appends it to each line passes ``False``).
        """
        overall, unadjusted = self.overall.tolist(), self.unadjusted.tolist()
        ranks, percentiles, provisional = self.ranks.tolist(), self.percentiles.tolist(), self.provisional.tolist()
        codes = self.task_codes.tolist()
        criteria = self._criteria_records()
        filled: dict[int, dict[str, str]] = {}
        for slot, policy, mask in self.filled:
            for row in np.flatnonzero(mask).tolist():
                filled.setdefault(row, {})[slot] = policy
        shared = to_dict(self.provenance) if provenance and self.provenance is not None else None
        # One row list of every dimension's scores; per profile, which of them are its own and, per
        # row, whether it has them all (then its breakdown is the profile's own; a row missing some
        # is rare and done by hand). Profiles repeat across tasks, so each is prepared once.
        all_dims = list(self.scores)
        matrix = np.column_stack([self.scores[d] for d in all_dims]) if all_dims else np.empty((self.size, 0))
        score_rows = matrix.tolist()
        prepared: dict[str, tuple[Any, ...]] = {}
        by_profile: list[tuple[Any, ...] | None] = []
        used = set(codes)
        for code, profile in enumerate(self.profiles):
            if code not in used:  # a task of the result without rows: its profile may lack dimensions
                by_profile.append(None)
                continue
            if profile.name not in prepared:
                dims = list(profile.weights)
                where = [all_dims.index(d) for d in dims]
                complete = _measured_rows(matrix[:, where])
                breakdown = {f"{d}_weight": w for d, w in profile.weights.items()}
                own = None if where == list(range(len(all_dims))) else where
                prepared[profile.name] = (profile, dims, [f"{d}_score" for d in dims], own, complete, breakdown)
            by_profile.append(prepared[profile.name])
        part_names = list(self.parts)
        part_matrix = np.column_stack([self.parts[p] for p in part_names]) if part_names else np.empty((self.size, 0))
        part_complete = _measured_rows(part_matrix)
        part_rows = part_matrix.tolist()
        difficulties = [a.name if a is not None else None for a in self.adjusters]
        ids, task_ids, tools, models = self.ids, self.task_ids, self.tools, self.models
        for i in range(self.size):
            code = codes[i]
            profile, dims, names, own, complete, breakdown = by_profile[code]
            record: dict[str, Any] = {
                "submission_id": str(ids[i]),
                "task_id": str(task_ids[i]),
                "overall_score": overall[i],
            }
            values = score_rows[i] if own is None else [score_rows[i][j] for j in own]
            if complete[i]:
                record.update(zip(names, values, strict=True))
                record["breakdown"] = dict(breakdown)
            else:
                present = [d for d, v in zip(dims, values, strict=True) if v == v]  # not NaN
                record.update((f"{d}_score", v) for d, v in zip(dims, values, strict=True) if v == v)
                record["breakdown"] = {f"{d}_weight": w for d, w in _kept_weights(profile, present).items()}
            record["weight_profile"] = profile.name
            record["difficulty"] = difficulties[code]
            record["unadjusted_overall_score"] = unadjusted[i]
            parts = part_rows[i]
            record["metric_scores"] = (
                dict(zip(part_names, parts, strict=True))
                if part_complete[i]
                else {p: v for p, v in zip(part_names, parts, strict=True) if v == v}
            )
            record["criteria"] = criteria[i]
            record["evaluated_at"] = self.evaluated_at
            if tools[i] is not None:
                record["tool"] = tools[i]
            if models[i] is not None:
                record["model"] = models[i]
            record["overall_ranking"] = ranks[i]
            record["percentile"] = percentiles[i]
            if provisional[i]:
                record["provisional"] = True
            if i in filled:
                record["filled"] = filled[i]
            if shared is not None:
                record["provenance"] = shared
            yield record

    def _criteria_records(self) -> list[list[dict[str, Any]]]:
        """Per row, its criteria's verdicts as :func:`~arena_core.model.serde.to_dict` gives them."""
        criteria: list[list[dict[str, Any]]] = [[] for _ in range(self.size)]
        for rows, verdicts in self.criteria.values():
            for criterion, column in verdicts:
                status, credit = column.status.tolist(), column.credit.tolist()
                # Every passing verdict of a criterion reads the same: one shared (read-only) dict.
                passed = {
                    "type": criterion.type,
                    "status": "passed",
                    "credit": 1.0,
                    "weight": criterion.weight,
                    "reason": "",
                }
                for local, row in enumerate(rows.tolist()):
                    verdict = STATUSES[status[local]]
                    if verdict == "passed" and credit[local] == 1.0:
                        criteria[row].append(passed)
                        continue
                    reason = "" if verdict == "passed" else column.reason(local)
                    criteria[row].append(
                        {
                            "type": criterion.type,
                            "status": verdict,
                            "credit": credit[local],
                            "weight": criterion.weight,
                            "reason": reason,
                        }
                    )
        return criteria

    def _build(self, i: int) -> Evaluation:
        code = self.task_codes[i]
        profile = self.profiles[code]
        present = [d for d in profile.weights if not math.isnan(self.raw_scores[d][i])]
        weights = profile.weights if len(present) == len(profile.weights) else _kept_weights(profile, present)
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


def _kept_weights(profile: WeightProfile, present: Sequence[str]) -> dict[str, float]:
    """The weights of the dimensions that were measured, renormalised to sum to 1 (summed in
    profile order, as the per-record path sums them)."""
    kept = 0.0
    for d in present:
        kept += profile.weights[d]
    return {d: profile.weights[d] / kept for d in present}


class EvaluationList(list[Evaluation]):
    """Evaluations made one record at a time, saying why the batch path did not run."""

    #: ``"per-record"``.
    path = "per-record"

    def __init__(self, evaluations: Sequence[Evaluation], fallback_reason: str) -> None:
        super().__init__(evaluations)
        #: The submission with a workspace, or the component in use without a batch form.
        self.fallback_reason: str | None = fallback_reason


def _verdict(criterion: SuccessCriterion, column: CheckColumn, row: int) -> CriterionResult:
    status = STATUSES[int(column.status[row])]
    reason = "" if status == "passed" else column.reason(row)
    return CriterionResult(criterion.type, status, float(column.credit[row]), criterion.weight, reason)  # type: ignore[arg-type]


def _measured_rows(matrix: np.ndarray) -> list[bool]:
    """Per row of ``matrix``, whether none of its values is NaN."""
    measured: list[bool] = (~np.isnan(matrix).any(axis=1)).tolist()
    return measured
