"""A gate: one dimension (correctness) that the others are credited in proportion to.

The spec scores a run's resources whether or not it solved its task, and failing is cheap: on
real leaderboards a run that gives up early out-scores the runs that solved the task, and every
profile mixing in efficiency, speed or cost ranks agents partly against what they achieve.
Under a gate (``gate = "correctness"``, the ``gated`` profile) every other dimension's score is
multiplied by the gate's score / 100, so a failed run earns nothing for its resources and a
partial one earns them pro rata, and the resource baselines of a task come from the runs that
the gate scores above 0 (the spec's "valid submissions"). A task that no run passed has no such
baseline: its runs are scored on the gate alone (the other dimensions ``filled`` as
``unsolved``).

Baselines need the gate's verdicts first, so a batch is scored twice: once against the
baselines of all its runs, which gives each run's gate score (the only figure of that pass that
is kept), then against the baselines of the runs that passed. The gate enters both the credit
and the overall score as shown, to 2 places, so that a run scored on its own with the gate's
result handed in (its criteria were checked once, in the first pass) gets exactly the batch's
numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from attrs import frozen

from arena_core.engine.results import EvaluationBatch
from arena_core.engine.rounding import round_exact, round_scalar
from arena_core.engine.rowparts import kept_weights
from arena_core.model.protocols import Score
from arena_core.model.records import Evaluation

__all__ = ["UNSOLVED", "Gated", "gate_column", "gate_scores", "gated_result", "known_gates", "left_out", "passes"]

#: What ``Evaluation.filled`` says of a dimension left out because no run of the task passed the gate.
UNSOLVED = "unsolved"


def gated_result(result: float | Score | None) -> Score | None:
    """The gate's result as it gates: its score rounded to 2 places (``None`` when left out)."""
    if result is None:
        return None
    if isinstance(result, (float, int)):
        return Score(round_scalar(float(result), 2))
    return result._replace(value=round_scalar(result.value, 2))


def left_out(
    overall: float, weights: Mapping[str, float], scores: Mapping[str, float], gate: str | None, result: Score | None
) -> tuple[float, dict[str, float]]:
    """The overall score and weights of a run some of whose dimensions were left out (those not in
    ``scores``): the weights of the rest renormalised to sum to 1, or, under a ``gate`` that was
    measured, the weights left out added to the gate's (what was not measured falls to the
    outcome, and the measured resources keep the weight the profile gives them, never more).
    Sums run in profile order, as the batch path sums them."""
    gated = gate in scores and result is not None
    kept = kept_weights(weights, list(scores), gate if gated else None)
    if gated:
        moved = 0.0
        for dimension in weights:
            if dimension not in scores:
                moved += weights[dimension]
        return overall + result.value * moved, kept  # type: ignore[union-attr]
    total = 0.0
    for dimension in scores:
        total += weights[dimension]
    return overall / total, kept


def gate_column(values: np.ndarray) -> np.ndarray:
    """The batch form of :func:`gated_result`: scores rounded to 2 places, NaN where left out."""
    rounded: np.ndarray = round_exact(values, 2)
    return rounded


def gate_scores(first: Sequence[Evaluation], gate: str) -> np.ndarray:
    """Per evaluation of a first pass, the gate's score (NaN where its profile has no such dimension)."""
    if isinstance(first, EvaluationBatch):
        column = first.scores.get(gate)
        return np.full(first.size, math.nan) if column is None else np.asarray(column, dtype=float)
    return np.array([e.scores.get(gate, math.nan) for e in first], dtype=float)


def passes(scores: np.ndarray) -> np.ndarray:
    """Per run, from its gate score, whether it counts toward its task's resource baselines: the
    gate scored it above 0, or its profile has no gate (NaN)."""
    out: np.ndarray = np.isnan(scores) | (scores > 0)
    return out


@frozen
class Gated:
    """The second pass under a gate: per row, whether its task has no run that passed the gate,
    and the first pass, whose gate results a pass record by record hands on (its criteria are
    not checked again). The batch path reads ``unsolved`` alone: the first pass's evaluations,
    built on access, are not built for it (300,000 runs under ``gated``: about 5 s)."""

    unsolved: np.ndarray
    first: Sequence[Evaluation]
    gate: str

    def per_record(self) -> tuple[np.ndarray, list[Score | None]]:
        """What :func:`~arena_core.engine.each.evaluate_each` takes: ``unsolved``, and the gate's
        result of each run's first pass (:func:`known_gates`)."""
        return self.unsolved, known_gates(self.first, self.gate)


def known_gates(first: Sequence[Evaluation], gate: str) -> list[Score | None]:
    """Per evaluation of a first pass, the gate's result to hand to the second (``None`` where its
    profile has no gate, or the gate was left out): the score as shown, with its criteria."""
    return [
        None if (value := e.scores.get(gate)) is None else Score(value, criteria=e.criteria, filled=_own(e, gate))
        for e in first
    ]


def _own(evaluation: Evaluation, gate: str) -> dict[str, str]:
    """What the gate's metric filled in itself (its own slot only)."""
    return {gate: evaluation.filled[gate]} if gate in evaluation.filled else {}
