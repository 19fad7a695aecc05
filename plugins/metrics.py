"""The spec's metrics: token, tool-call and iteration efficiency, efficiency, speed, cost, correctness.

Each formula is the spec's, branch for branch, so the default configuration reproduces the
spec's numbers exactly. Where the spec's comments promise something its code does not do
(a "logarithmic" token score that is linear), the code is what is kept; see
``docs/spec-notes.md``.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from functools import lru_cache
from typing import NoReturn

import numpy as np
from attrs import field, frozen

from arena_core import hookimpl
from arena_core.engine.batch import Batch
from arena_core.engine.composite import WeightedSum
from arena_core.model.errors import ValidationError, closest
from arena_core.model.protocols import CriterionChecker, Resolver, Score
from arena_core.model.records import Baseline, CriterionResult, Submission, SuccessCriterion, Task
from arena_core.workspace.confined import Workspace, WorkspaceError, WorkspaceSettings, open_workspace


def linear_scores(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """:func:`linear_score` over arrays, with the same floating-point operations."""
    with np.errstate(all="ignore"):
        between = (high - values) / (high - low) * 100.0
    return np.where(values <= low, 100.0, np.where(values >= high, 0.0, between))


def linear_score(value: float, low: float, high: float) -> float:
    """100 at or below ``low``, 0 at or above ``high``, linear in between (lower is better).

    The spec writes the token score as ``min(100, ratio * 100)`` and the others as
    ``ratio * 100``; between the two bounds ``ratio < 1``, so both are this.
    """
    if value <= low:
        return 100.0
    if value >= high:
        return 0.0
    return (high - value) / (high - low) * 100.0


class TokenEfficiency:
    """Fewer tokens, higher score: linear between the baseline's min and max tokens."""

    name = "token_efficiency"
    requires = ("total_tokens",)

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> float:
        return linear_score(submission.total_tokens, baseline.min_tokens, baseline.max_tokens)  # type: ignore[arg-type]

    def score_batch(self, batch: Batch) -> np.ndarray:
        return linear_scores(batch.column("total_tokens"), batch.baseline("min_tokens"), batch.baseline("max_tokens"))


class TokenEfficiencyLog:
    """The truly logarithmic token score the spec's comment promises (its code is linear).

    ``100 * (ln(1 + max) - ln(1 + tokens)) / (ln(1 + max) - ln(1 + min))`` between the
    baseline's min and max tokens, 100 at or below min, 0 at or above max. Doubling the tokens
    costs the same number of points wherever it happens, so a run at twice the minimum is no
    longer scored as almost perfect when the maximum is huge. Use it when token counts span
    orders of magnitude (they usually do); select it with
    ``[metrics] token_efficiency = "token_efficiency_log"``.
    """

    name = "token_efficiency_log"
    requires = ("total_tokens",)

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> float:
        tokens, low, high = submission.total_tokens, baseline.min_tokens, baseline.max_tokens
        if tokens <= low:  # type: ignore[operator]
            return 100.0
        if tokens >= high:  # type: ignore[operator]
            return 0.0
        return (math.log1p(high) - math.log1p(tokens)) / (math.log1p(high) - math.log1p(low)) * 100.0  # type: ignore[arg-type]

    def score_batch(self, batch: Batch) -> np.ndarray:
        tokens, low, high = batch.column("total_tokens"), batch.baseline("min_tokens"), batch.baseline("max_tokens")
        with np.errstate(all="ignore"):
            between = (np.log1p(high) - np.log1p(tokens)) / (np.log1p(high) - np.log1p(low)) * 100.0
        return np.where(tokens <= low, 100.0, np.where(tokens >= high, 0.0, between))


class TokenEfficiencyRobust:
    """Linear between Tukey's fences of the baseline's token quartiles instead of min and max.

    ``low = max(min, q25 - 1.5 * IQR)`` and ``high = min(max, q75 + 1.5 * IQR)``: 100 at or below
    ``low``, 0 at or above ``high``, linear in between. One runaway run at ten times the usual
    tokens no longer squeezes every other run toward 100; runs beyond the upper fence all score
    0. Without quartiles (default baselines, fewer than two token counts) it is the spec's
    linear score. Only tokens have quartiles in the spec's baseline, so only tokens have this
    form. Select it with ``[metrics] token_efficiency = "token_efficiency_robust"``.
    """

    name = "token_efficiency_robust"
    requires = ("total_tokens",)

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> float:
        low, high = baseline.min_tokens, baseline.max_tokens
        q25, q75 = baseline.q25_tokens, baseline.q75_tokens
        if q25 is not None and q75 is not None:
            spread = (q75 - q25) * 1.5
            low, high = max(low, q25 - spread), min(high, q75 + spread)
        return linear_score(submission.total_tokens, low, high)  # type: ignore[arg-type]

    def score_batch(self, batch: Batch) -> np.ndarray:
        low, high = batch.baseline("min_tokens"), batch.baseline("max_tokens")
        q25, q75 = batch.baseline("q25_tokens"), batch.baseline("q75_tokens")
        spread = (q75 - q25) * 1.5
        known = ~np.isnan(q25) & ~np.isnan(q75)
        fenced_low = np.where(known, np.maximum(low, q25 - spread), low)
        fenced_high = np.where(known, np.minimum(high, q75 + spread), high)
        return linear_scores(batch.column("total_tokens"), fenced_low, fenced_high)


@frozen
class PercentileRank:
    """Share of the baseline's submissions this one does better than, ×100 (lower is better).

    ``100 * (greater + ties / 2) / n`` over the ``n`` values the baseline was computed from
    (:attr:`~arena_core.model.records.Baseline.samples`): in the pipeline, the task's earlier
    submissions; in ``evaluate_many``, the arena's. Scores are spread evenly whatever the
    distribution's shape, and a single extreme run moves nobody else's score by more than
    ``100 / n``. Without samples (a default baseline, below 5 submissions) it is the spec's
    linear score between min and max. Select one per slot, e.g. ``[metrics] cost = "cost_percentile"``.
    """

    name: str
    field: str
    low: str
    """Baseline figure used as the lower bound when there are no samples."""
    high: str

    @property
    def requires(self) -> tuple[str, ...]:
        return (self.field,)

    @property
    def needs_samples(self) -> tuple[str, ...]:
        """Figures the engine keeps in baselines for this metric."""
        return (self.field,)

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> float:
        value = getattr(submission, self.field)
        sample = baseline.samples.get(self.field)
        if not sample:
            return linear_score(value, getattr(baseline, self.low), getattr(baseline, self.high))
        at_or_below = bisect_right(sample, value)
        below = bisect_left(sample, value)
        return ((len(sample) - at_or_below) + 0.5 * (at_or_below - below)) / len(sample) * 100.0

    def score_batch(self, batch: Batch) -> np.ndarray:
        values = batch.column(self.field)
        out = linear_scores(values, batch.baseline(self.low), batch.baseline(self.high))
        for baseline, local in batch.baseline_groups():
            sample = baseline.samples.get(self.field)
            if sample:
                ordered = np.asarray(sample, dtype=float)
                at_or_below = np.searchsorted(ordered, values[local], side="right")
                below = np.searchsorted(ordered, values[local], side="left")
                out[local] = ((len(ordered) - at_or_below) + 0.5 * (at_or_below - below)) / len(ordered) * 100.0
        return out


#: The percentile-rank alternatives, one per figure the spec normalises by min and max.
PERCENTILE_METRICS = (
    PercentileRank("token_efficiency_percentile", "total_tokens", "min_tokens", "max_tokens"),
    PercentileRank("tool_call_efficiency_percentile", "tool_calls", "min_tool_calls", "max_tool_calls"),
    PercentileRank("speed_percentile", "execution_time", "min_execution_time", "max_execution_time"),
    PercentileRank("cost_percentile", "estimated_cost", "min_cost", "max_cost"),
)


class ToolCallEfficiency:
    """Fewer tool calls, higher score: linear between the baseline's min and max calls."""

    name = "tool_call_efficiency"
    requires = ("tool_calls",)

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> float:
        return linear_score(submission.tool_calls, baseline.min_tool_calls, baseline.max_tool_calls)  # type: ignore[arg-type]

    def score_batch(self, batch: Batch) -> np.ndarray:
        return linear_scores(
            batch.column("tool_calls"), batch.baseline("min_tool_calls"), batch.baseline("max_tool_calls")
        )


class IterationEfficiency:
    """100 for one iteration, -15 per extra iteration down to 50 up to the median, then -10 each."""

    name = "iteration_efficiency"
    requires: tuple[str, ...] = ()

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> float:
        iterations = submission.iterations
        median = baseline.median_iterations
        if iterations == 1:
            return 100.0
        if iterations <= median:
            return max(50.0, 100.0 - (iterations - 1) * 15.0)
        return max(0.0, 50.0 - (iterations - median) * 10.0)

    def score_batch(self, batch: Batch) -> np.ndarray:
        iterations, median = batch.column("iterations"), batch.baseline("median_iterations")
        up_to_median = np.maximum(50.0, 100.0 - (iterations - 1) * 15.0)
        beyond = np.maximum(0.0, 50.0 - (iterations - median) * 10.0)
        return np.where(iterations == 1, 100.0, np.where(iterations <= median, up_to_median, beyond))


class Speed:
    """Faster, higher score: ``ratio ** 0.7`` between the baseline's min and max time.

    Unmeasured time (missing or 0) scores 50, as in the spec; inside the engine the
    ``missing.execution_time`` policy decides first (``neutral`` by default, the same 50).
    """

    name = "speed"
    requires = ("execution_time",)

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> float:
        time = submission.execution_time
        if not time:
            return 50.0
        if time <= baseline.min_execution_time:
            return 100.0
        if time >= baseline.max_execution_time:
            return 0.0
        ratio = (baseline.max_execution_time - time) / (baseline.max_execution_time - baseline.min_execution_time)
        return min(100.0, (ratio**0.7) * 100.0)

    def score_batch(self, batch: Batch) -> np.ndarray:
        time = batch.column("execution_time")
        low, high = batch.baseline("min_execution_time"), batch.baseline("max_execution_time")
        with np.errstate(all="ignore"):
            between = np.minimum(100.0, ((high - time) / (high - low)) ** 0.7 * 100.0)
        scored = np.where(time <= low, 100.0, np.where(time >= high, 0.0, between))
        return np.where((time == 0) | np.isnan(time), 50.0, scored)


class Cost:
    """Cheaper, higher score: linear between the baseline's min and max cost.

    Unmeasured cost (missing or 0) scores 50, as in the spec; inside the engine the
    ``missing.estimated_cost`` policy decides first (``neutral`` by default, the same 50).
    """

    name = "cost"
    requires = ("estimated_cost",)

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> float:
        cost = submission.estimated_cost
        if not cost:
            return 50.0
        return linear_score(cost, baseline.min_cost, baseline.max_cost)

    def score_batch(self, batch: Batch) -> np.ndarray:
        cost = batch.column("estimated_cost")
        scored = linear_scores(cost, batch.baseline("min_cost"), batch.baseline("max_cost"))
        return np.where((cost == 0) | np.isnan(cost), 50.0, scored)


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
        return Correctness(dict(resolver.checkers()), resolver.workspace_settings())

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> Score:
        criteria = task.success_criteria
        if not criteria:
            return Score(100.0)
        if submission.workspace is not None and any(
            hasattr(self.checkers.get(c.type), "check_workspace") for c in criteria
        ):
            results = self._check_in_workspace(submission, task)
        else:
            results = [self._check(i, c, submission, task) for i, c in enumerate(criteria)]
        earned = 0.0
        total_weight = 0.0
        for result in results:
            earned += result.credit * result.weight
            total_weight += result.weight
        if total_weight == 0:
            raise ValidationError(f"task {task.id!r}", "success_criteria", "at least one criterion with weight > 0")
        return Score(earned / total_weight * 100.0, criteria=tuple(results))

    def _check_in_workspace(self, submission: Submission, task: Task) -> list[CriterionResult]:
        """Open the workspace once and check every criterion; when it cannot be opened, the
        criteria that need it record why, and the others are judged on the claims."""
        if self.workspaces is None:
            raise RuntimeError("the correctness metric was scored before it was bound")
        criteria = task.success_criteria
        try:
            with open_workspace(submission.workspace, submission.workspace_ref, self.workspaces) as workspace:  # type: ignore[arg-type]
                return [self._check(i, c, submission, task, workspace) for i, c in enumerate(criteria)]
        except WorkspaceError as exc:
            unusable = f"workspace unusable: {exc}"
        return [
            CriterionResult(c.type, "error", 0.0, c.weight, unusable)
            if hasattr(self.checkers.get(c.type), "check_workspace")
            else self._check(i, c, submission, task)
            for i, c in enumerate(criteria)
        ]

    def supports_batch(self) -> bool:
        """The batch form applies when every registered checker has one."""
        return all(hasattr(c, "check_batch") for c in self.checkers.values())

    def score_batch(self, batch: Batch) -> np.ndarray:
        """Per task: each criterion's checker over the task's rows, then the weighted share."""
        scores = np.empty(batch.size)
        for task, rows in batch.tasks():
            criteria = task.success_criteria
            if not criteria:
                scores[rows] = 100.0
                continue
            earned = np.zeros(len(rows))
            total_weight = 0.0
            columns = []
            for index, criterion in enumerate(criteria):
                checker = self.checkers.get(criterion.type)
                if checker is None:
                    self._unknown(index, criterion, task)
                column = checker.check_batch(batch.subset(rows), criterion, task)  # type: ignore[union-attr]
                columns.append((criterion, column))
                earned = earned + column.credit * criterion.weight
                total_weight += criterion.weight
            if total_weight == 0:
                raise ValidationError(f"task {task.id!r}", "success_criteria", "at least one criterion with weight > 0")
            scores[rows] = earned / total_weight * 100.0
            batch.record_criteria(task, rows, columns)
        return scores

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
        try:
            in_workspace = getattr(checker, "check_workspace", None) if workspace is not None else None
            if in_workspace is not None:
                verdict = in_workspace(workspace, submission, criterion, task)
            else:
                verdict = checker.check(submission, criterion, task)
        except ValidationError:
            raise
        except WorkspaceError as exc:  # a refused path: the criterion fails, with the reason
            return CriterionResult(criterion.type, "failed", 0.0, criterion.weight, str(exc))
        except Exception as exc:  # a crashing checker costs its criterion, never the batch
            return CriterionResult(criterion.type, "error", 0.0, criterion.weight, f"{type(exc).__name__}: {exc}")
        if verdict is True or verdict is False:
            return _plain_verdicts(criterion.type, criterion.weight)[verdict]
        if verdict.type == criterion.type and verdict.weight == criterion.weight:
            return verdict
        return CriterionResult(criterion.type, verdict.status, verdict.credit, criterion.weight, verdict.reason)


@lru_cache(maxsize=1024)
def _plain_verdicts(type_: str, weight: float) -> tuple[CriterionResult, CriterionResult]:
    """(failed, passed) results of a criterion, made once: results are frozen, and a checker
    returning a bare bool is the common case on the single-record path."""
    return CriterionResult(type_, "failed", 0.0, weight), CriterionResult(type_, "passed", 1.0, weight)


#: The spec's combined efficiency score.
EFFICIENCY = WeightedSum(
    "efficiency", {"token_efficiency": 0.5, "tool_call_efficiency": 0.3, "iteration_efficiency": 0.2}
)


@hookimpl
def arena_register_metrics() -> list[object]:
    return [
        TokenEfficiency(),
        TokenEfficiencyLog(),
        TokenEfficiencyRobust(),
        *PERCENTILE_METRICS,
        ToolCallEfficiency(),
        IterationEfficiency(),
        EFFICIENCY,
        Speed(),
        Cost(),
        Correctness(),
    ]
