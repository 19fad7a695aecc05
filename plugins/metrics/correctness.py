"""The correctness metric: the task's success criteria, each checked by its registered checker, on
the submission's claims or in its workspace."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from functools import lru_cache
from typing import NoReturn

import attrs
import numpy as np
from attrs import field, frozen

from arena_core.engine.ahead import found_ahead
from arena_core.engine.batch import Batch
from arena_core.model.display import shown
from arena_core.model.errors import ValidationError, closest
from arena_core.model.protocols import CriterionChecker, Resolver, Score, bind
from arena_core.model.records import Baseline, CriterionResult, Submission, SuccessCriterion, Task
from arena_core.workspace.confined import Workspace, WorkspaceError, WorkspaceSettings
from arena_core.workspace.opening import open_workspace


@frozen
class Correctness:
    """Weighted share of the task's success criteria met (the spec's pass rate with equal weights).

    A task without criteria scores 100, as in the spec. A checker that raises does not stop
    scoring: its criterion earns nothing and the evaluation records why.
    """

    checkers: Mapping[str, CriterionChecker] = field(factory=dict)
    workspaces: WorkspaceSettings | None = None
    """How workspaces are opened and commands run; set when bound."""
    name = "correctness"
    requires = ()

    def bind(self, resolver: Resolver) -> Correctness:
        checkers = {kind: bind(checker, resolver) for kind, checker in resolver.checkers().items()}
        return Correctness(checkers, resolver.workspace_settings())

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> Score:
        criteria = task.success_criteria
        if not criteria:
            return Score(100.0)
        ahead = found_ahead(submission, task)  # checked before the store's transaction
        results = list(ahead) if ahead is not None else self.verdicts(submission, task)
        earned = 0.0
        total_weight = 0.0
        for result in results:
            if result.status == "unscored":  # no verdict: left out, never counted as failed
                continue
            earned += result.credit * result.weight
            total_weight += result.weight
        if total_weight == 0:
            if results and all(r.status == "unscored" for r in results):
                return Score(math.nan, criteria=tuple(results))  # no verdict at all: left out of the overall
            raise ValidationError(f"task {task.id!r}", "success_criteria", "at least one criterion with weight > 0")
        return Score(earned / total_weight * 100.0, criteria=tuple(results))

    def verdicts(self, submission: Submission, task: Task) -> list[CriterionResult]:
        """Each criterion's verdict, in task order: in the workspace when the run has one and a
        checker of the task checks workspaces, else on the run's claims."""
        criteria = task.success_criteria
        if submission.workspace is not None and any(
            hasattr(self.checkers.get(c.type), "check_workspace") for c in criteria
        ):
            return self._check_in_workspace(submission, task)
        check = self._check
        return [check(i, c, submission, task) for i, c in enumerate(criteria)]

    def _check_in_workspace(self, submission: Submission, task: Task) -> list[CriterionResult]:
        """Open the workspace once and check every criterion; when it cannot be opened, the
        criteria that need it record why, and the others are judged on the claims."""
        if self.workspaces is None:
            raise RuntimeError("the correctness metric was scored before it was bound")
        criteria = task.success_criteria
        try:
            with open_workspace(
                submission.workspace,  # type: ignore[arg-type]
                submission.workspace_ref,
                self.workspaces,
                owner=submission.id,
            ) as workspace:
                return [self._check(i, c, submission, task, workspace) for i, c in enumerate(criteria)]
        except WorkspaceError as exc:
            unusable = f"workspace unusable: {shown(str(exc))}"
        except ValidationError:  # the task's own criteria are wrong: that is the operator's error
            raise
        except Exception as exc:  # whatever a hostile workspace does, it costs its own verdicts only
            unusable = f"workspace unusable: {type(exc).__name__} while checking it"
        return [
            CriterionResult(c.type, "error", 0.0, c.weight, unusable)
            if hasattr(self.checkers.get(c.type), "check_workspace")
            else self._check(i, c, submission, task)
            for i, c in enumerate(criteria)
        ]

    def batch_blocker(self, tasks: Sequence[Task]) -> str | None:
        """The batch form applies when every checker these tasks' criteria use has one (a checker
        installed but unused changes nothing)."""
        without = {name for name, checker in self.checkers.items() if not hasattr(checker, "check_batch")}
        if not without:
            return None
        for task in tasks:
            for criterion in task.success_criteria:
                if criterion.type in without:
                    return f"checker {criterion.type!r} has no batch form (check_batch); task {task.id!r} uses it"
        return None

    def score_batch(self, batch: Batch) -> np.ndarray:
        """Per task: each criterion's checker over the task's rows, then the weighted share.
        Tasks with equal criteria whose checkers all say ``task_independent`` are checked
        together, one call per criterion for the whole group."""
        scores = np.empty(batch.size)
        known: dict[int, Hashable | None] = {}  # per criterion object (tasks read from files share them)
        for tasks, rows in batch.task_groups(lambda task: self._shared_criteria(task, known)):
            task = tasks[0]  # a group's tasks have equal criteria: the first names any error
            criteria = task.success_criteria
            if not criteria:
                scores[rows] = 100.0
                continue
            earned = np.zeros(len(rows))
            total_weight = 0.0
            columns = []
            rows_batch = batch.subset(rows)
            for index, criterion in enumerate(criteria):
                checker = self.checkers.get(criterion.type)
                if checker is None:
                    self._unknown(index, criterion, task)
                # The optional batch form: present, as batch_blocker() checked before this path ran.
                column = checker.check_batch(rows_batch, criterion, task)  # type: ignore[attr-defined]
                columns.append((criterion, column))
                earned = earned + column.credit * criterion.weight
                total_weight += criterion.weight
            if total_weight == 0:
                raise ValidationError(f"task {task.id!r}", "success_criteria", "at least one criterion with weight > 0")
            scores[rows] = earned / total_weight * 100.0
            batch.record_criteria(tasks, rows, columns)
        return scores

    def _shared_criteria(self, task: Task, known: dict[int, Hashable | None]) -> Hashable | None:
        """What tasks checked together must have equal: their criteria, when every checker of
        them is ``task_independent`` and the parameters are hashable; else ``None`` (alone).
        ``known``: each criterion's part, and each criteria tuple's key (tasks of one kind share
        theirs), by identity, for objects alive through the call."""
        criteria = task.success_criteria
        whole = known.get(id(criteria), False)
        if whole is not False:
            return whole
        parts = []
        for criterion in criteria:
            part = known.get(id(criterion), False)
            if part is False:
                part = known[id(criterion)] = self._criterion_key(criterion)
            parts.append(part)
        known[id(criteria)] = whole = None if None in parts else tuple(parts)
        return whole

    def _criterion_key(self, criterion: SuccessCriterion) -> Hashable | None:
        if not getattr(self.checkers.get(criterion.type), "task_independent", False):
            return None
        part = (criterion.type, criterion.weight, criterion.description, tuple(sorted(criterion.params.items())))
        try:
            hash(part)
        except TypeError:  # a list among the parameters, say
            return None
        return part

    def _unknown(self, index: int, criterion: SuccessCriterion, task: Task) -> NoReturn:
        raise ValidationError(
            f"task {task.id!r}",
            f"success_criteria.{index}.type",
            f"a registered criterion type ({', '.join(self.checkers)}){closest(criterion.type, self.checkers)}",
            criterion.type,
        )

    def _check(
        self,
        index: int,
        criterion: SuccessCriterion,
        submission: Submission,
        task: Task,
        workspace: Workspace | None = None,
    ) -> CriterionResult:
        checker = self.checkers.get(criterion.type)
        if checker is None:
            self._unknown(index, criterion, task)
        verdict: bool | CriterionResult
        try:
            in_workspace = getattr(checker, "check_workspace", None) if workspace is not None else None
            if in_workspace is not None:
                verdict = in_workspace(workspace, submission, criterion, task)
            else:
                verdict = checker.check(submission, criterion, task)
        except ValidationError:
            raise
        except WorkspaceError as exc:  # a refused path: the criterion fails, with the reason
            return CriterionResult(criterion.type, "failed", 0.0, criterion.weight, shown(str(exc)))
        except Exception as exc:  # a crashing checker costs its criterion, never the batch
            text = f"{type(exc).__name__}: {exc}"
            reason = shown(workspace.redact(text) if workspace is not None else text)
            return CriterionResult(criterion.type, "error", 0.0, criterion.weight, reason)
        if verdict is True or verdict is False:
            return _plain_verdicts(criterion.type, criterion.weight)[verdict]
        reason = verdict.reason if workspace is None else shown(workspace.redact(verdict.reason))
        if verdict.type == criterion.type and verdict.weight == criterion.weight and reason == verdict.reason:
            return verdict
        return attrs.evolve(verdict, type=criterion.type, weight=criterion.weight, reason=reason)


@lru_cache(maxsize=1024)
def _plain_verdicts(type_: str, weight: float) -> tuple[CriterionResult, CriterionResult]:
    """(failed, passed) results of a criterion, made once: results are frozen, and a checker
    returning a bare bool is the common case on the single-record path."""
    return CriterionResult(type_, "failed", 0.0, weight), CriterionResult(type_, "passed", 1.0, weight)
