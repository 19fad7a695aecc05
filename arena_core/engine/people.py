"""What people said about the runs, as a scorer hands it to its bound components: labels of
requirements (the ``judge`` criterion) and votes between runs (the ``community`` metric)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from arena_core.model.labels import Label, people_votes
from arena_core.model.votes import Vote, vote_tally

__all__ = ["PeopleEvidence"]


class PeopleEvidence:
    """Labels and votes taken for the runs scored from now on (``--labels``, ``--votes``)."""

    def __init__(self) -> None:
        #: People's labels of requirements as ``(met, unmet)`` raters per ``(run, requirement)``
        #: (:meth:`use_labels`): what a ``judge`` criterion records, and scores by under
        #: ``label_policy = "override"``. Bound checkers share this very mapping.
        self.label_votes: dict[tuple[str, str | None], tuple[int, int]] = {}
        #: People's votes between runs as ``(points won, votes)`` per run (:meth:`use_votes`):
        #: what the ``community`` metric scores. Bound metrics share this very mapping.
        self.vote_tally: dict[str, tuple[float, int]] = {}

    def labels(self) -> Mapping[tuple[str, str | None], tuple[int, int]]:
        return self.label_votes

    def use_labels(self, labels: Iterable[Label]) -> None:
        """Take people's labels (replacing those taken before) for the runs scored from now on."""
        self.label_votes.clear()
        self.label_votes.update(people_votes(labels))

    def votes(self) -> Mapping[str, tuple[float, int]]:
        return self.vote_tally

    def use_votes(self, votes: Iterable[Vote]) -> None:
        """Take people's votes (replacing those taken before) for the runs scored from now on."""
        self.vote_tally.clear()
        self.vote_tally.update(vote_tally(votes))
