"""Named alternatives to the spec's normalisation: logarithmic and Tukey-fenced token scores, and
percentile ranks against the baseline's samples (see ``docs/algorithms.md``)."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right

import numpy as np
from attrs import frozen

from arena_core.engine.batch import Batch
from arena_core.model.records import Baseline, Submission, Task
from arena_plugins.metrics.normalise import linear_score, linear_scores


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
