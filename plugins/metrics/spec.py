"""The spec's metrics, branch for branch: token, tool-call and iteration efficiency, their weighted
efficiency, speed and cost.

Where the spec's comments promise something its code does not do (a "logarithmic" token score that
is linear), the code is what is kept; see ``docs/spec-notes.md``. The named alternatives live in
:mod:`arena_plugins.metrics.alternatives`.
"""

from __future__ import annotations

import numpy as np

from arena_core.engine.batch import Batch
from arena_core.engine.columns import all_measured
from arena_core.engine.composite import WeightedSum
from arena_core.model.records import Baseline, Submission, Task
from arena_plugins.metrics.normalise import linear_score, linear_scores


class TokenEfficiency:
    """Fewer tokens, higher score: linear between the baseline's min and max tokens."""

    name = "token_efficiency"
    requires = ("total_tokens",)

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> float:
        return linear_score(submission.total_tokens, baseline.min_tokens, baseline.max_tokens)  # type: ignore[arg-type]

    def score_batch(self, batch: Batch) -> np.ndarray:
        return linear_scores(batch.column("total_tokens"), batch.baseline("min_tokens"), batch.baseline("max_tokens"))


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
    requires = ("iterations",)

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> float:
        iterations = submission.iterations
        if iterations is None:  # the missing-telemetry guard fills in or refuses an absent count first
            raise ValueError(f"submission {submission.id!r} has no iterations")
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
        score: float = min(100.0, (ratio**0.7) * 100.0)
        return score

    def score_batch(self, batch: Batch) -> np.ndarray:
        time = batch.column("execution_time")
        low, high = batch.baseline("min_execution_time"), batch.baseline("max_execution_time")
        with np.errstate(all="ignore"):
            between = np.minimum(100.0, ((high - time) / (high - low)) ** 0.7 * 100.0)
        scored = np.where(time <= low, 100.0, np.where(time >= high, 0.0, between))
        return scored if all_measured(time, zero_missing=True) else np.where((time == 0) | np.isnan(time), 50.0, scored)


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
        return scored if all_measured(cost, zero_missing=True) else np.where((cost == 0) | np.isnan(cost), 50.0, scored)


#: The spec's combined efficiency score.
EFFICIENCY = WeightedSum(
    "efficiency", {"token_efficiency": 0.5, "tool_call_efficiency": 0.3, "iteration_efficiency": 0.2}
)
