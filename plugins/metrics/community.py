"""The ``community`` metric: a run's share of the votes it was in that it won, as 0-100.

People's votes between two runs of a task (``--votes``, docs/community.md) give each run points:
1 for a win, a half for a tie (or ``both_bad``), each voter's last vote on a pair counting once.
A weight profile that names ``community`` weighs the people's preference like any dimension.

A run nobody voted on has no share: ``[missing] votes`` says what it scores, as for a missing
figure: ``error`` (the default: refused, naming the setting), ``neutral`` (50, recorded in the
evaluation's ``filled``) or ``reweight`` (left out, the other weights renormalised).
``comparable`` is refused: which runs of a task were voted on is not a figure of the runs.
"""

from __future__ import annotations

import numpy as np

from arena_core.engine.batch import Batch
from arena_core.model.errors import ValidationError
from arena_core.model.protocols import Resolver, Score
from arena_core.model.records import Baseline, Submission, Task

__all__ = ["Community"]

#: The ``[missing]`` key for runs without votes.
FIGURE = "votes"
_POLICIES = ("error", "neutral", "reweight")


class Community:
    """Points won over votes played, times 100 (see the module's note)."""

    name = "community"
    requires: tuple[str, ...] = ()

    def __init__(self, tally: dict[str, tuple[float, int]] | None = None, policy: str = "error") -> None:
        self._tally = {} if tally is None else tally
        self._policy = policy

    def bind(self, resolver: Resolver) -> Community:
        policy = resolver.missing_policy(FIGURE)
        if policy not in _POLICIES:
            raise ValidationError("configuration", f"missing.{FIGURE}", f"one of {', '.join(_POLICIES)}", policy)
        return Community(resolver.votes(), policy)  # type: ignore[arg-type]  # the live mapping

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> float | Score | None:
        found = self._tally.get(submission.id)
        if found is not None and found[1]:
            return 100.0 * found[0] / found[1]
        if self._policy == "neutral":
            return Score(50.0, filled={self.name: "neutral"})
        if self._policy == "reweight":
            return None
        raise _unvoted(submission.id)

    def score_batch(self, batch: Batch) -> np.ndarray:
        ids = batch.ids(np.arange(batch.size))
        won = np.array([self._tally.get(i, (np.nan, 0))[0] for i in ids], dtype=float)
        played = np.array([self._tally.get(i, (0.0, 0))[1] for i in ids], dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            shares = np.where(played > 0, 100.0 * won / np.maximum(played, 1.0), np.nan)
        unvoted = np.isnan(shares)
        if unvoted.any():
            if self._policy == "error":
                raise _unvoted(ids[int(np.flatnonzero(unvoted)[0])])
            if self._policy == "neutral":
                batch.note_filled(self.name, "neutral", unvoted)
                shares[unvoted] = 50.0
        return shares


def _unvoted(submission_id: str) -> ValidationError:
    return ValidationError(
        f"submission {submission_id!r}",
        FIGURE,
        "votes (the 'community' metric scores the share of its votes a run won; set missing.votes to "
        "'neutral' or 'reweight' to score runs nobody voted on)",
    )
