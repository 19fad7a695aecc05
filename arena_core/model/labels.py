"""Labels: people's verdicts on runs, the evidence a judge is measured against.

A label says whether a person found a run's work met: the run as a whole, or one requirement of
its ``judge`` criterion. Several people may label one item; their **majority** is the people's
verdict of it (a tie leaves it without one). A label never silently replaces a judge's verdict:
``label_policy = "calibrate"`` (the default) keeps labels as evidence about the judge
(``arena calibrate``, corrected leaderboards); ``"override"`` scores a labelled requirement by
the people's majority, and the evaluation says so.

``sample`` says how the item came to be labelled: ``random`` (drawn uniformly within its group,
as the review queue draws: a correction by such labels is valid), ``disagreement`` (drawn
because a panel of judges split: kept apart from the statistics), or nothing (a file that does
not say: the statistics warn that the sample is not known to be random).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from attrs import frozen

__all__ = ["SAMPLES", "Item", "Label", "item_of", "majority", "people_verdicts", "people_votes", "votes_verdict"]

#: How a labelled item may have been drawn.
SAMPLES = ("random", "disagreement")

#: What a label or a verdict is about: a run (``requirement`` ``None``: the run as a whole) or
#: one requirement of it.
Item = tuple[str, str | None]


@frozen
class Label:
    """One person's verdict on one item."""

    submission_id: str
    label: bool
    """``True``: the person found it met."""
    rater: str
    """Who labelled it (a reviewer's token name, an annotator's id)."""
    requirement: str | None = None
    """The requirement of the run's ``judge`` criterion labelled, or ``None`` for the whole run."""
    at: str | None = None
    """When (ISO 8601), where known."""
    sample: str | None = None
    """How the item was drawn (one of :data:`SAMPLES`), or ``None`` where not known."""


def item_of(label: Label) -> Item:
    return (label.submission_id, label.requirement)


def majority(votes: Sequence[bool]) -> bool | None:
    """The people's verdict: the majority of their labels; ``None`` on a tie (or no label)."""
    yes = sum(votes)
    no = len(votes) - yes
    return True if yes > no else False if no > yes else None


def people_votes(labels: Iterable[Label]) -> dict[Item, tuple[int, int]]:
    """Each labelled item's ``(met, unmet)`` count of raters, a rater's last label counting once
    (what ``label_policy = "override"`` scores by, and what the evaluation records)."""
    last: dict[tuple[Item, str], bool] = {}
    for label in labels:
        last[(item_of(label), label.rater)] = label.label
    counts: dict[Item, tuple[int, int]] = {}
    for (item, _), verdict in last.items():
        met, unmet = counts.get(item, (0, 0))
        counts[item] = (met + verdict, unmet + (not verdict))
    return counts


def votes_verdict(votes: tuple[int, int]) -> bool | None:
    """The people's verdict from ``(met, unmet)`` raters: their majority; ``None`` on a tie."""
    met, unmet = votes
    return None if met == unmet else met > unmet


def people_verdicts(labels: Iterable[Label]) -> dict[Item, bool | None]:
    """Each labelled item's people's verdict (:func:`votes_verdict` of :func:`people_votes`: a
    rater's last label counting once; ``None`` where they tie)."""
    return {item: votes_verdict(votes) for item, votes in people_votes(labels).items()}
