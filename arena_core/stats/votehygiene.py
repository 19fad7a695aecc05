"""Vote hygiene: duplicates and voters whose votes follow a rule rather than the runs.

Applied before any rating (docs/community.md):

- **Repeated votes**: a voter voting on the same pair of runs again replaces their vote (one
  counts: :func:`arena_core.model.votes.last_votes`).
- **Near duplicates**: a repeated vote within ``window`` seconds of the voter's previous vote on
  the pair (a double submission, a burst) is counted apart from a change of mind; either way one
  vote counts. Votes without a time are not counted.
- **Voters who follow a rule.** For each voter and each rule ``h`` -- "always backs group X"
  (for every X the voter saw), "always picks a" (the run shown first), "always picks the
  shorter" (fewer tokens) -- the voter's votes are fitted by the pooled model plus one
  parameter ``lambda >= 0`` in the rule's direction::

      logit P(a wins) = eta + lambda * z_h      (z_h = +1 where h says a, -1 where it says b, 0 where silent)

  where ``eta`` is the pooled Bradley-Terry log-odds of the vote. The voter's score is the
  largest likelihood ratio ``2 * (l(lambda_hat) - l(0))`` over the rules. Under the pooled model
  each one-sided ratio is asymptotically ``chi2(1)`` with half its mass at 0, so a voter is
  flagged when the score exceeds the ``chi2(1)`` quantile at ``1 - 2 * alpha / rules`` (Bonferroni
  over the rules the voter was tested on; ``alpha`` = :data:`ALPHA`). ``tests/test_votes.py``
  calibrates this by simulation: honest voters' false flags stay below ``alpha``, and planted
  voters who always back one group are found at recall >= 0.6, precision >= 0.9.
  The test runs twice: the flagged voters' votes are left out of the pooled model and every
  voter is tested again, so a rigged group's inflated rating does not shelter its riggers.
- Voters with fewer than ``min_votes`` votes are **too few to judge**: kept, and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
from attrs import frozen

from arena_core.model.votes import Vote, pair_of
from arena_core.stats.battles import log_logistic, logistic

__all__ = ["ALPHA", "MIN_VOTES", "WINDOW", "VoterCheck", "near_duplicates", "rule_scores", "threshold"]

#: The chance of flagging an honest voter the threshold allows, per voter.
ALPHA = 0.001
#: Votes a voter needs before they are judged.
MIN_VOTES = 8
#: Seconds within which the same verdict on the same match-up is a near duplicate.
WINDOW = 60.0


@frozen
class VoterCheck:
    """One voter's test."""

    voter: str
    votes: int
    score: float
    """The largest likelihood ratio over the rules (0 when no rule explains their votes better)."""
    rule: str
    """The rule with that ratio: ``backs GROUP``, ``picks a``, ``picks shorter``; empty when none."""
    flagged: bool
    judged: bool
    """Whether the voter had ``min_votes`` votes to be judged on."""


def threshold(rules: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """The score above which a voter tested on ``rules`` rules is flagged (per voter)."""
    from scipy.stats import chi2

    return np.asarray(chi2.isf(2.0 * alpha / np.maximum(rules, 1), 1), dtype=float)


def near_duplicates(votes: Sequence[Vote], window: float = WINDOW) -> int:
    """How many votes repeat the same voter's vote on the same pair of runs within ``window``
    seconds of their previous one (a double submission, a burst): of a voter's votes on a pair
    one counts, whatever the window (:func:`~arena_core.model.votes.last_votes`); this tells a
    burst from a change of mind. Votes without a time are not counted."""
    previous: dict[tuple[str, tuple[str, str]], float] = {}
    found = 0
    for when, vote in sorted(((_seconds(v.at), v) for v in votes if v.at is not None), key=lambda p: p[0]):
        key = (vote.voter, pair_of(vote))
        if key in previous and when - previous[key] <= window:
            found += 1
        previous[key] = when
    return found


def rule_scores(
    voter_of: np.ndarray,
    voters: int,
    log_odds: np.ndarray,
    outcome: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    shorter: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per voter: the largest likelihood ratio over the rules, the rule's code (``-1`` for
    "picks a", ``-2`` for "picks shorter", ``g >= 0`` for "backs group g"; ``-3`` for none),
    and how many rules they were tested on.

    :param voter_of: each vote's voter index; ``log_odds`` the pooled model's log-odds that a
        wins; ``shorter``: +1 where a is the shorter, -1 where b is, 0 where neither (or None).
    """
    count = len(outcome)
    rows = [
        (voter_of, np.full(count, -1), np.ones(count)),
        (voter_of, first, np.ones(count)),
        (voter_of, second, -np.ones(count)),
    ]
    if shorter is not None:
        rows.append((voter_of, np.full(count, -2), shorter.astype(float)))
    who = np.concatenate([r[0] for r in rows])
    rule = np.concatenate([r[1] for r in rows])
    z = np.concatenate([r[2] for r in rows])
    eta = np.tile(log_odds, len(rows))
    y = np.tile(outcome, len(rows))
    keys, key_of = np.unique(np.stack([who, rule]), axis=1, return_inverse=True)
    key_of = key_of.ravel()
    lam = np.zeros(keys.shape[1])
    for _ in range(40):
        p = logistic(eta + lam[key_of] * z)
        gradient = np.bincount(key_of, z * (y - p), len(lam))
        information = np.bincount(key_of, z * z * p * (1 - p), len(lam))
        step = np.where(information > 1e-12, gradient / np.maximum(information, 1e-12), 20.0)
        lam = np.clip(lam + np.clip(step, -5.0, 5.0), 0.0, 20.0)
        if np.max(np.abs(step) * (lam < 20.0) * (lam > 0.0), initial=0.0) < 1e-8:
            break
    ratio = 2.0 * (
        np.bincount(key_of, _loglik(eta + lam[key_of] * z, y), len(lam))
        - np.bincount(key_of, _loglik(eta, y), len(lam))
    )
    ratio = np.maximum(ratio, 0.0)
    best, code = np.zeros(voters), np.full(voters, -3)
    order = np.lexsort((ratio, keys[0]))  # by voter, each voter's largest ratio last
    ends = order[np.r_[keys[0][order][1:] != keys[0][order][:-1], True]]
    best[keys[0, ends]] = ratio[ends]
    code[keys[0, ends]] = np.where(ratio[ends] > 0, keys[1, ends], -3)
    return best, code, np.bincount(keys[0], minlength=voters)


def _loglik(eta: np.ndarray, y: np.ndarray) -> np.ndarray:
    found: np.ndarray = y * log_logistic(eta) + (1 - y) * log_logistic(-eta)
    return found


def _seconds(at: str) -> float:
    when = datetime.fromisoformat(at)
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
