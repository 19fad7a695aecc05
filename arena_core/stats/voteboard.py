"""The board of ``arena votes``: votes cleaned (:mod:`~arena_core.stats.votehygiene`), fitted
(:mod:`~arena_core.stats.battles`), with intervals, rank ranges and tiers.

A vote between two runs of the same group says nothing about groups: it is counted and left
out. ``both_bad`` is a tie unless ``both_bad="drop"`` leaves it out. With style control every
figure's normalised difference ``(a - b) / (a + b)`` (0 where both are 0) is standardised over
the votes and entered beside the groups; a vote whose runs lack a figure is left out, and
counted. The rating shown is the style-controlled one, the uncontrolled one beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from attrs import frozen

from arena_core.engine.ranking import competition_ranks
from arena_core.model.errors import ValidationError
from arena_core.model.records import Submission
from arena_core.model.votes import Vote, last_votes, points
from arena_core.stats.battles import ELO_SCALE, Battles, Fit, bootstrap, fit, ratings_of
from arena_core.stats.rankranges import leader_tiers, paired_ranges
from arena_core.stats.votehygiene import MIN_VOTES, WINDOW, VoterCheck, near_duplicates, rule_scores, threshold

__all__ = [
    "BOTH_BAD",
    "Hygiene",
    "StyleRow",
    "VoteBoard",
    "VoteRow",
    "cleaned",
    "figure_reader",
    "flagged_voters",
    "vote_board",
]

#: What ``both_bad`` votes do: count as a tie, or be left out.
BOTH_BAD = ("tie", "drop")


@frozen
class VoteRow:
    """One group's rating."""

    group: str
    rating: float
    ci_low: float
    """Bootstrap interval over votes."""
    ci_high: float
    se_low: float
    """Interval from the sandwich covariance (normal)."""
    se_high: float
    uncontrolled: float | None
    """The rating without style control (``None`` when there is none)."""
    rank: int
    rank_low: int
    rank_high: int
    tier: int
    votes: int
    voters: int
    share: float
    """Points won over votes played (ties half), 0-100."""


@frozen
class StyleRow:
    """One style figure's coefficient: log-odds of winning per standard deviation of the
    normalised difference."""

    figure: str
    coefficient: float
    ci_low: float
    ci_high: float
    se_low: float
    se_high: float


@frozen
class Hygiene:
    """What was left out before rating, and why."""

    given: int
    repeated: int
    """Earlier votes of a voter on a pair they voted on again later (a change of mind)."""
    near_duplicates: int
    """Earlier votes of a voter on a pair they voted on again within the window (a burst)."""
    same_group: int
    both_bad: int
    """``both_bad`` votes left out (``both_bad="drop"``)."""
    without_figure: Mapping[str, int]
    voters: Sequence[VoterCheck]
    removed: int
    """Votes of flagged voters left out (0 with ``keep_flagged``)."""


@frozen
class VoteBoard:
    """What ``arena votes`` prints: the groups best first, the style figures, and the hygiene."""

    rows: Sequence[VoteRow]
    style: Sequence[StyleRow]
    hygiene: Hygiene
    used: int
    """Votes the ratings rest on."""
    prior: float
    """Tie games per group added because the plain likelihood had no maximum (0: none)."""


def vote_board(
    votes: Sequence[Vote],
    group_of: Mapping[str, str],
    figure_of: Callable[[str, str], float | None],
    *,
    style: Sequence[str] = (),
    both_bad: str = "tie",
    keep_flagged: bool = False,
    resamples: int = 1000,
    seed: int = 20240601,
    confidence_level: float = 0.95,
) -> VoteBoard:
    """The board of ``votes`` between runs of the groups ``group_of`` (run id to group);
    ``figure_of(run, figure)`` gives a run's figure for style control and for the "picks the
    shorter" rule (``total_tokens``)."""
    kept, battles, hygiene = cleaned(
        votes, group_of, figure_of, style=style, both_bad=both_bad, keep_flagged=keep_flagged
    )
    return _board(kept, battles, hygiene, resamples, seed, confidence_level)


def cleaned(
    votes: Sequence[Vote],
    group_of: Mapping[str, str],
    figure_of: Callable[[str, str], float | None],
    *,
    style: Sequence[str] = (),
    both_bad: str = "tie",
    keep_flagged: bool = False,
) -> tuple[list[Vote], Battles, Hygiene]:
    """The votes a board rates after hygiene (see the module's note), as the regression reads
    them, and what was left out: what :func:`vote_board` rates, and what learned weights are
    fitted to."""
    if both_bad not in BOTH_BAD:
        raise ValidationError("votes", "both_bad", f"one of {', '.join(BOTH_BAD)}", both_bad)
    kept = last_votes(votes)
    near = near_duplicates(votes, WINDOW)
    repeated = len(votes) - len(kept) - near
    same = [v for v in kept if group_of[v.a] == group_of[v.b]]
    kept = [v for v in kept if group_of[v.a] != group_of[v.b]]
    dropped_bad = sum(v.winner == "both_bad" for v in kept) if both_bad == "drop" else 0
    if both_bad == "drop":
        kept = [v for v in kept if v.winner != "both_bad"]
    groups = tuple(sorted({group_of[r] for v in kept for r in (v.a, v.b)}))
    index = {g: i for i, g in enumerate(groups)}
    first = np.array([index[group_of[v.a]] for v in kept], dtype=np.int64)
    second = np.array([index[group_of[v.b]] for v in kept], dtype=np.int64)
    outcome = np.array([points(v) for v in kept])
    columns, lacking = _style_columns(kept, style, figure_of)
    usable = np.asarray(~lacking.any(axis=1), dtype=bool)
    without = {f: int(lacking[:, k].sum()) for k, f in enumerate(style)}
    kept = [v for v, use in zip(kept, usable, strict=True) if use]
    first, second, outcome, columns = first[usable], second[usable], outcome[usable], columns[usable]
    if not kept:
        raise ValidationError("votes", "votes", "votes between runs of different groups to rate", "none left")
    columns = _standardised(columns, style)
    battles = Battles(groups, first, second, outcome, columns, tuple(style))
    checks = _check_voters(kept, battles, figure_of)
    flagged = {c.voter for c in checks if c.flagged}
    removed = 0
    if flagged and not keep_flagged:
        keep = np.array([v.voter not in flagged for v in kept])
        removed = int((~keep).sum())
        kept = [v for v, k in zip(kept, keep, strict=True) if k]
        battles = Battles(groups, first[keep], second[keep], outcome[keep], columns[keep], tuple(style))
    return kept, battles, Hygiene(len(votes), repeated, near, len(same), dropped_bad, without, checks, removed)


def flagged_voters(
    votes: Sequence[Vote],
    group_of: Mapping[str, str],
    figure_of: Callable[[str, str], float | None],
    both_bad: str = "tie",
) -> set[str]:
    """The voters the hygiene test of :func:`cleaned` flags: what a weights fit leaves out, as the board does."""
    return {c.voter for c in cleaned(votes, group_of, figure_of, both_bad=both_bad)[2].voters if c.flagged}


def figure_reader(runs: Sequence[Submission], figures: Sequence[str]) -> Callable[[str, str], float | None]:
    """``(run id, figure) -> value``: a numeric field of the run (``files_created`` counted),
    or ``meta.KEY``; ``None`` where the run lacks it.

    :raises ValidationError: a figure that is no numeric field, or a meta value that is not a number.
    """
    fields = {"total_tokens", "tool_calls", "iterations", "execution_time", "estimated_cost", "files_created",
              "tests_passed", "tests_total", "input_tokens", "output_tokens", "reasoning_tokens", "correctness"}  # fmt: skip
    for figure in figures:
        if not figure.startswith("meta.") and figure not in fields:
            raise ValidationError("votes", "style", f"meta.KEY or one of {', '.join(sorted(fields))}", figure)
    by_id = {run.id: run for run in runs}

    def value(run_id: str, figure: str) -> float | None:
        run = by_id[run_id]
        found = run.meta.get(figure[5:]) if figure.startswith("meta.") else getattr(run, figure)
        if found is None:
            return None
        if isinstance(found, tuple):
            return float(len(found))
        if isinstance(found, bool) or not isinstance(found, (int, float)):
            raise ValidationError(f"submission {run_id!r}", figure, "a number, for style control", found)
        return float(found)

    return value


def _board(
    kept: Sequence[Vote], battles: Battles, hygiene: Hygiene, resamples: int, seed: int, confidence_level: float
) -> VoteBoard:
    from scipy.stats import norm

    estimate = fit(battles)
    drawn = bootstrap(battles, estimate, resamples, seed)
    groups = len(battles.groups)
    ratings, resampled = ratings_of(estimate.theta), ratings_of(drawn[:, :groups])
    alpha = (1 - confidence_level) / 2
    low, high = np.quantile(resampled, alpha, axis=0), np.quantile(resampled, 1 - alpha, axis=0)
    spread = norm.isf(alpha) * np.sqrt(np.maximum(np.diag(estimate.covariance), 0.0))
    uncontrolled = None
    if battles.style.shape[1]:
        plain = Battles(battles.groups, battles.first, battles.second, battles.outcome, np.zeros((len(kept), 0)))
        uncontrolled = ratings_of(fit(plain).theta)
    rounded = [round(float(r), 2) for r in ratings]
    order = sorted(range(groups), key=lambda g: (-rounded[g], battles.groups[g]))
    ranks = competition_ranks([rounded[g] for g in order])
    best, worst = paired_ranges(resampled[:, order], np.array(ranks), confidence_level)
    tiers = leader_tiers(best, worst)
    played = np.bincount(battles.first, minlength=groups) + np.bincount(battles.second, minlength=groups)
    won = np.bincount(battles.first, battles.outcome, groups) + np.bincount(battles.second, 1 - battles.outcome, groups)
    voters: list[set[str]] = [set() for _ in range(groups)]
    for v, a, b in zip(kept, battles.first, battles.second, strict=True):
        voters[a].add(v.voter)
        voters[b].add(v.voter)
    rows = [
        VoteRow(
            group=battles.groups[g],
            rating=float(ratings[g]),
            ci_low=float(low[g]),
            ci_high=float(high[g]),
            se_low=float(ratings[g] - ELO_SCALE * spread[g]),
            se_high=float(ratings[g] + ELO_SCALE * spread[g]),
            uncontrolled=None if uncontrolled is None else float(uncontrolled[g]),
            rank=ranks[i],
            rank_low=int(best[i]),
            rank_high=int(worst[i]),
            tier=tiers[i],
            votes=int(played[g]),
            voters=len(voters[g]),
            share=float(100.0 * won[g] / played[g]),
        )
        for i, g in enumerate(order)
    ]
    style_rows = [
        StyleRow(
            figure=name,
            coefficient=float(estimate.beta[k]),
            ci_low=float(np.quantile(drawn[:, groups + k], alpha)),
            ci_high=float(np.quantile(drawn[:, groups + k], 1 - alpha)),
            se_low=float(estimate.beta[k] - spread[groups + k]),
            se_high=float(estimate.beta[k] + spread[groups + k]),
        )
        for k, name in enumerate(battles.style_names)
    ]
    return VoteBoard(rows, style_rows, hygiene, len(kept), estimate.prior)


def _style_columns(
    votes: Sequence[Vote], style: Sequence[str], figure_of: Callable[[str, str], float | None]
) -> tuple[np.ndarray, np.ndarray]:
    """Per vote and figure, the normalised difference ``(a - b) / (a + b)`` and whether a run
    lacks the figure."""
    columns = np.zeros((len(votes), len(style)))
    lacking = np.zeros((len(votes), len(style)), dtype=bool)
    for i, vote in enumerate(votes):
        for k, figure in enumerate(style):
            a, b = figure_of(vote.a, figure), figure_of(vote.b, figure)
            if a is None or b is None:
                lacking[i, k] = True
            elif a + b != 0:
                columns[i, k] = (a - b) / (abs(a) + abs(b))
    return columns, lacking


def _standardised(columns: np.ndarray, style: Sequence[str]) -> np.ndarray:
    """Each column centred and scaled to standard deviation 1 over the votes."""
    spread = columns.std(axis=0)
    for k, figure in enumerate(style):
        if spread[k] == 0:
            raise ValidationError(
                "votes", "style", f"a figure that differs between the runs voted on ({figure} never does)", figure
            )
    standard: np.ndarray = (columns - columns.mean(axis=0)) / np.where(spread == 0, 1.0, spread)
    return standard


def _check_voters(
    votes: Sequence[Vote], battles: Battles, figure_of: Callable[[str, str], float | None]
) -> list[VoterCheck]:
    """Each voter's rule test (:mod:`~arena_core.stats.votehygiene`), twice: the second time
    against the pooled model without the voters the first flagged."""
    names = sorted({v.voter for v in votes})
    index = {name: i for i, name in enumerate(names)}
    voter_of = np.array([index[v.voter] for v in votes], dtype=np.int64)
    counts = np.bincount(voter_of, minlength=len(names))
    judged = counts >= MIN_VOTES
    shorter = _shorter(votes, figure_of)
    flagged = np.zeros(len(names), dtype=bool)
    for _ in range(2):
        keep = ~flagged[voter_of]
        pooled = fit(
            Battles(
                battles.groups, battles.first[keep], battles.second[keep], battles.outcome[keep], battles.style[keep]
            )
        )
        odds = _log_odds(pooled, battles)
        score, code, tested = rule_scores(
            voter_of, len(names), odds, battles.outcome, battles.first, battles.second, shorter
        )
        flagged = judged & (score > threshold(tested))
    rules = {-1: "picks a", -2: "picks shorter", -3: ""}
    return [
        VoterCheck(
            name,
            int(counts[i]),
            float(score[i]),
            rules.get(int(code[i]), f"backs {battles.groups[int(code[i])]}" if code[i] >= 0 else ""),
            bool(flagged[i]),
            bool(judged[i]),
        )
        for i, name in enumerate(names)
    ]


def _log_odds(estimate: Fit, battles: Battles) -> np.ndarray:
    odds: np.ndarray = estimate.theta[battles.first] - estimate.theta[battles.second] + battles.style @ estimate.beta
    return odds


def _shorter(votes: Sequence[Vote], figure_of: Callable[[str, str], float | None]) -> np.ndarray | None:
    """+1 where run a has fewer tokens, -1 where b has, 0 where equal or unknown; ``None`` when
    no vote's runs both report tokens."""
    out = np.zeros(len(votes))
    for i, vote in enumerate(votes):
        a, b = figure_of(vote.a, "total_tokens"), figure_of(vote.b, "total_tokens")
        if a is not None and b is not None and a != b:
            out[i] = 1.0 if a < b else -1.0
    return out if out.any() else None
