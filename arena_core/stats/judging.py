"""What judging cost a set of evaluations: requests made to judges, answers from the verdict
cache, and dollars, from each ``judge`` criterion's details (see
:attr:`~arena_core.model.records.CriterionResult.details`). A judge's cost is never a run's."""

from __future__ import annotations

import math
from collections.abc import Iterable

from attrs import frozen

from arena_core.model.records import Evaluation

__all__ = ["Judging", "judging_spent"]


@frozen
class Judging:
    requests: int
    """Requests made to judges (a retried one counts each attempt)."""
    cached: int
    """Answers that came from the verdict cache (no request)."""
    cost: float
    """Dollars the requests made cost, where their usage could be priced."""
    unpriced: int
    """Requests made whose cost is not known (no usage reported, or no price for the model)."""

    def __str__(self) -> str:
        note = f"; {self.unpriced} not priced" if self.unpriced else ""
        return f"judging: {self.requests} requests, {self.cached} answers from the cache, ${self.cost:.4f}{note}"


def judging_spent(evaluations: Iterable[Evaluation]) -> Judging | None:
    """The judging behind ``evaluations``; ``None`` when none of them was judged."""
    requests = cached = unpriced = 0
    costs: list[float] = []
    judged = False
    for evaluation in evaluations:
        for criterion in evaluation.criteria:
            for detail in criterion.details:
                answers = detail.get("judges")
                if not isinstance(answers, dict):
                    continue
                judged = True
                for answer in answers.values():
                    if answer.get("cached"):
                        cached += 1
                    elif "verdict" in answer and not str(answer.get("error", "")).startswith("self-judging refused"):
                        requests += int(answer.get("attempts", 1))
                        if isinstance(answer.get("cost"), (int, float)):
                            costs.append(float(answer["cost"]))
                        else:
                            unpriced += 1
    return Judging(requests, cached, math.fsum(costs), unpriced) if judged else None
