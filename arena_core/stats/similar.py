"""Tasks like a given one (``arena tasks --similar TASK``): solved by the same groups, and alike
in their features.

Two tasks' response patterns are compared over the groups that ran both: the Pearson
correlation of the groups' shares of credit on the one with their shares on the other (the
same groups solve both, the same groups fail both). A pattern with no spread (every group
solved it) says nothing about which groups: it is compared by the fitted difficulties
instead, ``exp(-|difference|)``. With features, the share of them on which the two agree (the
same value; numbers within half a standard deviation) counts for 30%. Each row says why: the
correlation, the groups it rests on, the difficulty gap and the values shared.
"""

from __future__ import annotations

import numpy as np
from attrs import frozen

from arena_core.model.errors import ValidationError, closest
from arena_core.stats.prediction import BoardFit

__all__ = ["SimilarTask", "similar_tasks"]

#: The weight of the features' agreement in the similarity, when there are features.
_FEATURES_WEIGHT = 0.3
#: Fewer groups than this in common: the pattern is not compared.
_FEWEST_GROUPS = 3


@frozen
class SimilarTask:
    task: str
    similarity: float
    """0 to 1: the pattern's agreement (and the features', when given)."""
    correlation: float | None
    """Of the groups' shares on the two tasks (``None``: too few groups in common, or no spread)."""
    groups: int
    """Groups that ran both."""
    difficulty_gap: float
    """Fitted difficulty of this task minus the given one's (logits)."""
    shared: tuple[str, ...]
    """Feature values the two share."""


def similar_tasks(board: BoardFit, task: str, count: int = 10) -> list[SimilarTask]:
    """The ``count`` tasks most like ``task``, most similar first."""
    if task not in board.tasks:
        raise ValidationError("--similar", "task", f"a task of the board{closest(task, board.tasks)}", task)
    k = board.tasks.index(task)
    ran = board.counts > 0
    shares = np.where(ran, board.solved, np.nan)
    difficulty = board.fit.difficulties[0]
    found = []
    for other, name in enumerate(board.tasks):
        if other == k:
            continue
        both = ran[:, k] & ran[:, other]
        correlation = _correlation(shares[both, k], shares[both, other])
        gap = float(difficulty[other] - difficulty[k])
        pattern = max(correlation, 0.0) if correlation is not None else float(np.exp(-abs(gap)))
        shared = _shared(board, k, other)
        similarity = pattern
        if board.features is not None and board.features.levels:
            agreement = len(shared) / len(board.features.levels)
            similarity = (1 - _FEATURES_WEIGHT) * pattern + _FEATURES_WEIGHT * agreement
        found.append(SimilarTask(name, similarity, correlation, int(both.sum()), gap, shared))
    found.sort(key=lambda s: (-s.similarity, abs(s.difficulty_gap), s.task))
    return found[:count]


def _correlation(a: np.ndarray, b: np.ndarray) -> float | None:
    if len(a) < _FEWEST_GROUPS or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return float(np.corrcoef(a, b)[0, 1])


def _shared(board: BoardFit, k: int, other: int) -> tuple[str, ...]:
    if board.features is None:
        return ()
    out = []
    for name, values in board.features.levels.items():
        mine, theirs = values[k], values[other]
        if name in board.features.columns:  # a number, standardised in its column
            column = board.features.values[:, board.features.columns.index(name)]
            if mine != "(none)" and theirs != "(none)" and abs(column[k] - column[other]) <= 0.5:
                out.append(f"{name}~{mine}")
        elif mine == theirs:
            out.append(f"{name}={mine}")
    return tuple(out)
