"""Community ratings from votes (stats/battles.py, stats/votehygiene.py, stats/voteboard.py),
checked against independent computations: statsmodels' logistic regression on the same design
matrix, choix's Bradley-Terry, and simulations with known ratings, style effects and planted
voters."""

from __future__ import annotations

import math

import choix
import numpy as np
import pytest
import statsmodels.api as sm
from scipy.stats import norm

from arena_core.model.votes import Vote, last_votes, vote_tally
from arena_core.stats.battles import ELO_SCALE, Battles, bootstrap, fit, needs_prior, ratings_of
from arena_core.stats.voteboard import vote_board
from arena_core.stats.votehygiene import near_duplicates

#: LMArena's published style coefficients (tokens, lists, bold, headers) on the logit.
LMARENA_STYLE = np.array([0.039, 0.022, 0.019, 0.017])


def _design(battles: Battles) -> np.ndarray:
    """The design matrix written out: +1 at a's group, -1 at b's (the last group's column
    dropped: only differences are known), then the style covariates."""
    count = len(battles.outcome)
    groups = np.zeros((count, len(battles.groups)))
    groups[np.arange(count), battles.first] += 1
    groups[np.arange(count), battles.second] -= 1
    return np.hstack([groups[:, :-1], battles.style])


def _simulate(rng: np.random.Generator, groups: int, votes: int, beta: np.ndarray, ties: float = 0.1):
    theta = rng.normal(0.0, 0.6, groups)
    first = rng.integers(0, groups, votes)
    second = (first + rng.integers(1, groups, votes)) % groups
    style = rng.normal(size=(votes, len(beta)))
    p = 1 / (1 + np.exp(-(theta[first] - theta[second] + style @ beta)))
    # Ties with chance 2 * ties * min(p, 1 - p), taken half from each side: E[points] stays p,
    # as the model (a tie is half a win) has it.
    tie = ties * np.minimum(p, 1 - p)
    u = rng.random(votes)
    outcome = np.where(u < p - tie, 1.0, np.where(u < p + tie, 0.5, 0.0))
    names = tuple(f"g{i:02d}" for i in range(groups))
    return Battles(names, first, second, outcome, style, tuple(f"s{k}" for k in range(len(beta)))), theta


def test_the_fit_is_the_maximum_likelihood_logistic_regression_on_the_same_design() -> None:
    rng = np.random.default_rng(7)
    battles, _ = _simulate(rng, 6, 4000, np.array([0.3, -0.2]))
    ours = fit(battles)
    glm = sm.GLM(battles.outcome, _design(battles), family=sm.families.Binomial()).fit(cov_type="HC0", tol=1e-14)
    theta = np.append(glm.params[:5], 0.0)
    assert ours.prior == 0
    np.testing.assert_allclose(ours.theta, theta - theta.mean(), atol=1e-6)
    np.testing.assert_allclose(ours.beta, glm.params[5:], atol=1e-6)
    # The sandwich covariance of the style coefficients is statsmodels' HC0 (White's).
    np.testing.assert_allclose(np.diag(ours.covariance)[6:], np.diag(glm.cov_params())[5:], rtol=1e-6)


def test_without_ties_or_style_the_ratings_are_choix_bradley_terry() -> None:
    rng = np.random.default_rng(3)
    battles, _ = _simulate(rng, 8, 3000, np.zeros(0), ties=0.0)
    winners = np.where(battles.outcome == 1, battles.first, battles.second)
    losers = np.where(battles.outcome == 1, battles.second, battles.first)
    params = choix.opt_pairwise(
        8, list(zip(winners.tolist(), losers.tolist(), strict=True)), alpha=0.0, method="Newton-CG"
    )
    np.testing.assert_allclose(ratings_of(fit(battles).theta), ratings_of(params - params.mean()), atol=1e-4)


def test_a_group_that_won_every_vote_gets_a_finite_rating_by_the_prior_and_the_board_says_so() -> None:
    battles = Battles(("a", "b", "c"), np.array([0, 0, 1, 2, 1]), np.array([1, 2, 2, 1, 0]),
                      np.array([1.0, 1.0, 1.0, 0.0, 0.0]), np.zeros((5, 0)))  # fmt: skip
    assert needs_prior(battles)
    found = fit(battles)
    assert found.prior == 1.0 and np.all(np.isfinite(found.theta)) and found.theta[0] == found.theta.max()
    mixed = Battles(("a", "b"), np.array([0, 0]), np.array([1, 1]), np.array([1.0, 0.0]), np.zeros((2, 0)))
    assert not needs_prior(mixed)


def test_simulated_ratings_and_style_effects_are_inside_their_intervals_at_the_nominal_rate() -> None:
    """20 groups, LMArena-sized style effects, 140,000 votes, 20 times: the sandwich intervals
    hold the true ratings and style coefficients 95% of the time (within 3 points)."""
    rng = np.random.default_rng(11)
    covered, style_covered = [], []
    z = norm.isf(0.025)
    for _ in range(20):
        battles, theta = _simulate(rng, 20, 140_000, LMARENA_STYLE)
        estimate = fit(battles)
        spread = z * np.sqrt(np.diag(estimate.covariance))
        truth = ratings_of(theta)
        found = ratings_of(estimate.theta)
        covered.extend(np.abs(found - truth) <= ELO_SCALE * spread[:20])
        style_covered.extend(np.abs(estimate.beta - LMARENA_STYLE) <= spread[20:])
    assert abs(np.mean(covered) - 0.95) <= 0.03, np.mean(covered)
    assert abs(np.mean(style_covered) - 0.95) <= 0.05, np.mean(style_covered)


def test_the_bootstrap_over_votes_agrees_with_the_sandwich_and_holds_the_truth() -> None:
    rng = np.random.default_rng(5)
    battles, theta = _simulate(rng, 20, 30_000, LMARENA_STYLE)
    estimate = fit(battles)
    drawn = bootstrap(battles, estimate, 100, seed=1)
    boot_sd = drawn.std(axis=0)
    sandwich_sd = np.sqrt(np.diag(estimate.covariance))
    np.testing.assert_allclose(boot_sd, sandwich_sd, rtol=0.25)
    low, high = np.quantile(ratings_of(drawn[:, :20]), [0.025, 0.975], axis=0)
    assert np.mean((low <= ratings_of(theta)) & (ratings_of(theta) <= high)) >= 0.85


def _planted(seed: int, voters: int = 1000, per: int = 20, share: float = 0.02):
    """Votes on 20 groups, a ``share`` of voters always backing group g00 and voting only on its
    battles; each vote on a task of its own, two runs with random token counts."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 100, 20) / ELO_SCALE
    planted = set(range(int(voters * share)))
    group_of, tokens, votes = {}, {}, []
    for voter in range(voters):
        for _ in range(per):
            if voter in planted:
                ga, gb = 0, int(rng.integers(1, 20))
                if rng.random() < 0.5:
                    ga, gb = gb, ga
            else:
                ga = int(rng.integers(20))
                gb = (ga + int(rng.integers(1, 20))) % 20
            task = f"t{len(votes)}"
            a, b = f"{task}/a", f"{task}/b"
            group_of[a], group_of[b] = f"g{ga:02d}", f"g{gb:02d}"
            tokens[a], tokens[b] = float(rng.integers(1000, 5000)), float(rng.integers(1000, 5000))
            if voter in planted:
                winner = "a" if ga == 0 else "b"
            else:
                winner = "a" if rng.random() < 1 / (1 + math.exp(-(theta[ga] - theta[gb]))) else "b"
            votes.append(Vote(f"v{len(votes)}", task, a, b, winner, f"u{voter}"))
    return votes, group_of, tokens, {f"u{v}" for v in planted}


def test_hygiene_finds_planted_voters_and_undoes_their_inflation() -> None:
    votes, group_of, tokens, planted = _planted(seed=2)
    figure = lambda run, _: tokens[run]  # noqa: E731
    board = vote_board(votes, group_of, figure, resamples=20)
    flagged = {c.voter for c in board.hygiene.voters if c.flagged}
    found = len(flagged & planted)
    assert found / len(planted) >= 0.6 and found / len(flagged) >= 0.9, (found, len(flagged))
    assert board.hygiene.removed >= found * 20
    honest = vote_board([v for v in votes if v.voter not in planted], group_of, figure, resamples=20, keep_flagged=True)
    unfiltered = vote_board(votes, group_of, figure, resamples=20, keep_flagged=True)
    rating = {board: {r.group: r.rating for r in b.rows}["g00"] for board, b in
              (("filtered", board), ("honest", honest), ("unfiltered", unfiltered))}  # fmt: skip
    assert abs(rating["filtered"] - rating["honest"]) <= 3.0, rating
    assert rating["unfiltered"] - rating["honest"] > 20.0, rating  # what no filtering leaves


def test_honest_voters_are_flagged_below_the_documented_rate() -> None:
    votes, group_of, tokens, _ = _planted(seed=4, share=0.0)
    board = vote_board(votes, group_of, lambda run, _: tokens[run], resamples=10)
    assert sum(c.flagged for c in board.hygiene.voters) <= 2  # alpha 0.001 over 1,000 voters: 1 expected at most


def test_a_voter_who_always_picks_the_first_run_is_flagged_by_that_rule() -> None:
    votes, group_of, tokens, _ = _planted(seed=6, voters=300, share=0.0)
    rng = np.random.default_rng(0)
    for n in range(30):
        ga, gb = rng.choice(20, 2, replace=False)
        task = f"x{n}"
        group_of[f"{task}/a"], group_of[f"{task}/b"] = f"g{ga:02d}", f"g{gb:02d}"
        tokens[f"{task}/a"] = tokens[f"{task}/b"] = 100.0
        votes.append(Vote(f"x{n}", task, f"{task}/a", f"{task}/b", "a", "always-a"))
    board = vote_board(votes, group_of, lambda run, _: tokens[run], resamples=10)
    check = next(c for c in board.hygiene.voters if c.voter == "always-a")
    assert check.flagged and check.rule == "picks a"


def test_repeated_votes_count_once_and_near_duplicates_within_the_window_are_told_apart() -> None:
    first = Vote("1", "t", "r1", "r2", "a", "ana", "2026-11-01T10:00:00Z")
    burst = Vote("2", "t", "r2", "r1", "a", "ana", "2026-11-01T10:00:30Z")  # the same pair, shown the other way
    later = Vote("3", "t", "r1", "r2", "b", "ana", "2026-11-01T12:00:00Z")  # a change of mind
    other = Vote("4", "t", "r1", "r2", "b", "bo", "2026-11-01T10:00:10Z")
    assert last_votes([first, burst, later, other]) == [later, other]
    assert vote_tally([first, burst]) == {"r2": (1.0, 1), "r1": (0.0, 1)}
    assert near_duplicates([first, burst, later, other]) == 1
    board = vote_board([first, burst, later, other], {"r1": "x", "r2": "y"}, lambda run, figure: None, resamples=10)
    assert (board.hygiene.near_duplicates, board.hygiene.repeated, board.used) == (1, 1, 2)


def test_the_board_counts_what_it_left_out_and_rates_the_rest() -> None:
    group_of = {"r1": "x", "r2": "y", "r3": "x", "r4": "y"}
    votes = [
        Vote("1", "t", "r1", "r2", "a", "ana"),
        Vote("2", "t", "r1", "r3", "a", "ana"),  # the same group: says nothing about groups
        Vote("3", "t", "r3", "r4", "both_bad", "bo"),
        Vote("4", "t", "r4", "r1", "a", "cy"),
        Vote("5", "t", "r2", "r3", "b", "di"),
    ]
    board = vote_board(votes, group_of, lambda run, figure: None, both_bad="drop", resamples=20)
    assert (board.hygiene.same_group, board.hygiene.both_bad, board.used) == (1, 1, 3)
    rows = {r.group: r for r in board.rows}
    assert rows["x"].rating > rows["y"].rating and rows["x"].votes == 3
    assert math.isclose(rows["x"].rating + rows["y"].rating, 2000.0)
    with pytest.raises(Exception, match="style"):
        vote_board(votes, group_of, lambda run, figure: 1.0, style=("total_tokens",), resamples=20)
