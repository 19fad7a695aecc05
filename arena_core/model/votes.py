"""Votes: people comparing two runs of one task, the evidence community ratings are built from.

A vote says which of two runs of the same task a person preferred: ``a``, ``b``, a ``tie``, or
``both_bad``. The runs are what is compared (shown to the voter without their tool or model),
so a group's rating is the preference for its runs. A voter who votes on the same pair again
changed their mind: their last vote counts, once (:func:`last_votes`).
"""

from __future__ import annotations

from collections.abc import Iterable

from attrs import field, frozen

from arena_core.model.checks import printable_name

__all__ = ["WINNERS", "Vote", "last_votes", "pair_of", "points", "vote_tally"]

#: What a vote may say: the first run won, the second, neither (a tie), or both were bad.
WINNERS = ("a", "b", "tie", "both_bad")


@frozen
class Vote:
    """One person's preference between two runs of one task."""

    id: str = field(validator=printable_name)
    task_id: str = field(validator=printable_name)
    a: str = field(validator=printable_name)
    """The submission id of the run shown first."""
    b: str = field(validator=printable_name)
    """The submission id of the run shown second."""
    winner: str
    """One of :data:`WINNERS`."""
    voter: str = field(validator=printable_name)
    """Who voted (a voter's token name, an annotator's id): printable, as every name that reaches
    a terminal, a file or a database is."""
    at: str | None = None
    """When (ISO 8601), where known."""


def pair_of(vote: Vote) -> tuple[str, str]:
    """The two runs a vote compares, in a fixed order (the same pair however they were shown)."""
    return (vote.a, vote.b) if vote.a <= vote.b else (vote.b, vote.a)


def last_votes(votes: Iterable[Vote]) -> list[Vote]:
    """Each voter's last vote on each pair of runs, in the order the kept votes were cast (the
    order given: a file's lines, a store's arrival)."""
    last: dict[tuple[str, tuple[str, str]], int] = {}
    given = list(votes)
    for index, vote in enumerate(given):
        last[(vote.voter, pair_of(vote))] = index
    return [given[i] for i in sorted(last.values())]


#: What run ``a`` earns from each verdict: a win, a loss, half of a tie (``both_bad`` is a tie
#: unless a board drops it).
_POINTS = {"a": 1.0, "b": 0.0, "tie": 0.5, "both_bad": 0.5}


def points(vote: Vote) -> float:
    """What run ``a`` earns from the vote: 1 for a win, 0 for a loss, a half for a tie or
    ``both_bad``."""
    return _POINTS[vote.winner]


def vote_tally(votes: Iterable[Vote]) -> dict[str, tuple[float, int]]:
    """Per run, the points it won and the votes it was in (each voter's last vote on a pair):
    what the ``community`` metric scores."""
    tally: dict[str, tuple[float, int]] = {}
    for vote in last_votes(votes):
        for run, earned in ((vote.a, points(vote)), (vote.b, 1.0 - points(vote))):
            won, count = tally.get(run, (0.0, 0))
            tally[run] = (won + earned, count + 1)
    return tally
