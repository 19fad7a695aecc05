"""Quality assurance: the spec's outlier detection and evaluation validation.

Both follow the spec's rules, flags and messages, on measured figures only (the spec counts a
missing time as 0 s, "extremely fast"), and handle the inputs on which the spec's code would
crash (no submissions; a submission without a token count).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from typing import Any

import numpy as np
from attrs import frozen

from arena_core.engine.columns import Columns
from arena_core.engine.grouporder import GroupOrder
from arena_core.model.records import DIMENSIONS, Evaluation, Submission

__all__ = ["Outlier", "detect_outliers", "outliers_in_columns", "outliers_of_tasks", "validate"]


@frozen
class Outlier:
    """A submission with two or more suspicious indicators (the spec's ``detect_outliers`` item)."""

    submission_id: str
    flags: tuple[str, ...]
    recommended_action: str = "manual_review"


def detect_outliers(submissions: Sequence[Submission]) -> list[Outlier]:
    """The spec's rules: fewer tokens than 10% of the median, under 5 s, exactly one tool call;
    a submission with two or more of these is flagged for manual review.

    Only measured figures count: a missing execution time (absent, or 0, which the spec reads
    as missing) is not "extremely fast", where the spec's code counts it as 0 s; submissions
    without a token count are left out of the median and of the token rule.
    """
    return outliers_in_columns(Columns.from_submissions(submissions))


def outliers_in_columns(columns: Columns, first: int = 0) -> list[Outlier]:
    """:func:`detect_outliers` on submissions held as columns, with the same rules, flags and
    order, in a few array operations.

    :param first: flag only the rows from this one on, judged among all of them (the pipeline
        flags a batch's runs against their task's whole history).
    """
    return outliers_of_tasks(columns, [(0, first, len(columns.ids))])


def outliers_of_tasks(
    columns: Columns, spans: Sequence[tuple[int, int, int]], token_medians: np.ndarray | None = None
) -> list[Outlier]:
    """:func:`outliers_in_columns` for several tasks whose rows lie one task after another:
    each span ``(start, first, stop)`` is a task's rows ``start:stop``, judged together, of which
    ``first:stop`` are flagged. Each task's token median is its measured tokens' (the middle
    value, or the mean of the two middle ones), found for all the tasks at once as a baseline's
    are (:class:`~arena_core.engine.grouporder.GroupOrder`: a loop over a batch's 500 tasks took
    15-25 ms).

    :param token_medians: each task's token median, when the caller has them (the pipeline's
        baselines sort the same tokens): sorting the tokens of a million stored runs again cost
        about 20 ms of each batch."""
    if not spans:
        return []
    starts, firsts, stops = (np.array(column, dtype=np.int64) for column in zip(*spans, strict=True))
    count = len(spans)
    # A task without measured tokens gets 0 here, and its flagged rows (none measured) no token hit.
    median = token_medians
    if median is None:
        task_of_row = np.full(len(columns.ids), count, dtype=np.int64)  # rows in no span: a group of their own
        task_of_row[_rows(starts, stops)] = np.repeat(np.arange(count), stops - starts)
        median = GroupOrder(columns, task_of_row, count + 1, False).median("total_tokens")[:count]
    flagged = _rows(firsts, stops)
    task_of_flagged = np.repeat(np.arange(count), stops - firsts)
    tokens, times, calls = (columns.numeric[f][flagged] for f in ("total_tokens", "execution_time", "tool_calls"))
    with np.errstate(invalid="ignore"):
        rules = (
            ("extremely_efficient_tokens", tokens < median[task_of_flagged] * 0.1),
            ("extremely_fast", (times > 0) & (times < 5)),  # an unmeasured time (absent, or 0) is not fast
            ("minimal_tool_usage", calls == 1),
        )
    hits = sum(mask.astype(np.int64) for _, mask in rules)
    return [
        Outlier(str(columns.ids[row]), tuple(flag for flag, mask in rules if mask[at]))
        for at, row in zip(np.flatnonzero(hits >= 2).tolist(), flagged[hits >= 2].tolist(), strict=True)
    ]


def _rows(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """The row numbers of the ranges ``starts[i]:stops[i]``, one after another."""
    sizes = stops - starts
    return np.repeat(starts - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum()))


def validate(
    evaluation: Evaluation | Mapping[str, Any], total_tokens: float | None = None, unmeasured: Set[str] = frozenset()
) -> list[str]:
    """The spec's ``validate_evaluation_metrics``: score ranges, the suspicious pair, token count.

    :param total_tokens: the submission's token count when ``evaluation`` is a model (a dict
        may carry it as ``total_tokens``). When it is unknown the token check is skipped: the
        spec would report every evaluation without the key as "Suspiciously low token count".
    :param unmeasured: dimensions that rest, in whole or in part, on filled-in figures; the
        suspicious pair (efficiency and speed both above 95) is judged on measured scores only.
    """
    if isinstance(evaluation, Evaluation):
        scores = {"overall": evaluation.overall_score, **evaluation.scores}
    else:
        scores = {
            name: evaluation[f"{name}_score"] for name in ("overall", *DIMENSIONS) if f"{name}_score" in evaluation
        }
        total_tokens = evaluation.get("total_tokens", total_tokens)
    errors = []
    for name in ("overall", *DIMENSIONS):
        if name in scores and not 0 <= scores[name] <= 100:
            errors.append(f"{name}_score out of range: {scores[name]}")
    if not unmeasured & {"efficiency", "speed"} and scores.get("efficiency", 0) > 95 and scores.get("speed", 0) > 95:
        errors.append("Suspicious: Both efficiency and speed scores are extremely high")
    if total_tokens is not None and total_tokens < 10:
        errors.append("Suspiciously low token count")
    return errors
