"""An item response board's bootstrap by the fit's linear response to the tasks' weights
(arena_core.stats.irtbootstrap), Rasch and 2PL: equal to exact refits where the response is
linear (weights near 1), and, on boards simulated from known abilities, intervals that cover
the truth."""

from __future__ import annotations

import numpy as np
import pytest

from arena_core.stats import irt, irtsums
from arena_core.stats.irtbootstrap import _expected, linearised_scores
from arena_core.stats.rankranges import uniform_counts
from arena_plugins.aggregators import ItemResponse


def two_pl_board(groups: int, tasks: int, rng: np.random.Generator, runs: float = 1.0):
    """(counts, solved, abilities, difficulties, slopes) drawn from a 2PL with known parameters;
    a share ``runs`` of the cells run."""
    theta, b, a = rng.normal(0, 1, groups), rng.normal(0, 1, tasks), np.exp(rng.normal(0, 0.4, tasks))
    solved = (rng.random((groups, tasks)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(float)
    return (rng.random((groups, tasks)) < runs).astype(float), solved, theta, b, a


@pytest.mark.parametrize("model", ["rasch", "2pl"])
@pytest.mark.parametrize("runs", [1.0, 0.4])
def test_for_weights_near_one_it_equals_an_exact_refit(runs: float, model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the fit's response to the weights is linear (each weight 1 + 1e-4 x noise), the
    resamples' scores are those of refitting each one, to the refits' own precision: the
    Hessian, its blocks and the task gradients are right (a sign changed in any one fails)."""
    monkeypatch.setattr(irt, "TOLERANCE", 1e-12)
    rng = np.random.default_rng(4)
    counts, solved, *_ = two_pl_board(15, 80, rng, runs)
    found = irt.fit(counts, solved, model=model)
    weights = 1 + 1e-4 * rng.normal(size=(4, 80))
    refitted = irt.expected_scores(irt.fit(counts, solved, weights, model), weights)
    unmoved = irt.expected_scores(found, weights)  # the whole fit's parameters, the resample's weights
    moved = linearised_scores(counts, solved, found, weights, model) - unmoved
    assert np.abs(refitted - unmoved).min() > 1e-6  # the refits do move: there is a response to match
    # equal up to the response's second order: a thousandth of the largest move (a cell that
    # barely moves differs by more than a thousandth of its own move, under Rasch)
    assert np.abs(moved - (refitted - unmoved)).max() <= 1e-3 * np.abs(refitted - unmoved).max()


@pytest.mark.parametrize("model", ["rasch", "2pl"])
def test_its_intervals_cover_simulated_truth_as_nominally_as_refits(model: str) -> None:
    """Boards of 20 groups x 120 tasks drawn from a population of tasks: each group's true
    expected share solved over the population is known. The 95 % percentile intervals of the
    linearised resamples cover it about 95 % of the time (the refits' bootstrap covered 95.5 %
    on 2PL boards like these, 25 groups x 200 tasks, the linearised one 95.5 % too)."""
    rng = np.random.default_rng(11)
    groups, tasks = 20, 120
    theta = rng.normal(0, 1, groups)
    population_b = rng.normal(0, 1, 100_000)
    population_a = np.exp(rng.normal(0, 0.4, 100_000)) if model == "2pl" else np.ones(100_000)
    truth = 100 * (1 / (1 + np.exp(-population_a * (theta[:, None] - population_b)))).mean(axis=1)
    covered, boards = 0, 30
    for _ in range(boards):
        drawn = rng.integers(0, len(population_b), tasks)
        b, a = population_b[drawn], population_a[drawn]
        solved = (rng.random((groups, tasks)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(float)
        counts = np.ones((groups, tasks))
        weights = uniform_counts(rng, tasks, 400)
        scores = linearised_scores(counts, solved, irt.fit(counts, solved, model=model), weights, model)
        low, high = np.quantile(scores, [0.025, 0.975], axis=0)
        covered += int(((low <= truth) & (truth <= high)).sum())
    assert 0.92 <= covered / (groups * boards) <= 0.985, covered / (groups * boards)


@pytest.mark.parametrize("model", ["rasch", "2pl"])
def test_the_board_takes_the_response_and_the_refits_board_refits(model: str) -> None:
    """``irt`` and ``irt_2pl`` score the whole board by the fit and its resamples by the linear
    response; ``irt_refits`` and ``irt_2pl_refits`` refit every resample. Same whole-board
    scores; on a board of many tasks their resampled intervals agree to a tenth of their width on
    average (the bootstraps' own noise at 300 resamples is a few hundredths)."""
    rng = np.random.default_rng(8)
    counts, solved, *_ = two_pl_board(12, 300, rng, runs=0.7)
    table = _Table(counts, solved)
    ones = np.ones((1, 300))
    fast, refits = ItemResponse(model), ItemResponse(model, refits=True)
    name = "irt" if model == "rasch" else "irt_2pl"
    assert (fast.name, refits.name) == (name, f"{name}_refits") and not fast.refits and refits.refits
    assert np.array_equal(fast.aggregate(table, ones), refits.aggregate(table, ones))
    weights = uniform_counts(rng, 300, 300)
    ours, theirs = fast.aggregate(table, weights), refits.aggregate(table, weights)
    width = np.subtract(*np.quantile(theirs, [0.975, 0.025], axis=0))
    gaps = np.abs(np.quantile(ours, [0.025, 0.975], axis=0) - np.quantile(theirs, [0.025, 0.975], axis=0)) / width
    assert gaps.mean() < 0.1 and gaps.max() < 0.3, gaps
    assert np.corrcoef(ours.ravel(), theirs.ravel())[0, 1] > 0.99
    weights[:, :150] = 0  # a group that ran none of the drawn tasks has no score in that resample
    counts[0, 150:] = 0
    assert np.isnan(fast.aggregate(_Table(counts, solved), weights)[:, 0]).all()


class _Table:
    """What the item response aggregators read of a TaskTable: the cells' counts and their
    mean correctness (0-100, NaN where a group ran no run)."""

    def __init__(self, counts: np.ndarray, solved: np.ndarray) -> None:
        self.counts = counts
        self.dimension_means = {"correctness": np.where(counts > 0, 100 * solved, np.nan)}


@pytest.mark.parametrize("spread", [1.0, 400.0])
def test_rasch_scores_from_one_exponential_a_group_and_a_task_are_the_cells_own(spread: float) -> None:
    """Under Rasch a resample's expected scores take ``exp(-ability) * exp(difficulty)`` for each
    cell's ``exp(difficulty - ability)``: equal to the logistic of each cell (irt.probabilities,
    weighted), also where abilities and difficulties lie hundreds of logits apart and one factor
    alone would overflow (the cells then take their own exponentials, not inf x 0)."""
    rng = np.random.default_rng(8)
    theta, b = spread * rng.normal(size=(7, 12)), spread * rng.normal(size=(7, 30))
    weights = rng.poisson(1.0, size=(7, 30)).astype(float)
    found = irt.IrtFit(theta, b, np.ones_like(b), 0, np.zeros((7, 0)), np.full(7, 2.0))
    expected = irt.expected_scores(found, weights)
    scores = _expected(theta, b, None, weights)
    assert np.isfinite(scores).all()
    np.testing.assert_allclose(scores, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("slopes", [False, True])
def test_scores_of_many_groups_interpolated_in_the_ability_are_the_cells_own(slopes: bool) -> None:
    """Past the interpolant's nodes in groups a resample's expected scores are its sum over
    tasks interpolated in the ability (arena_core.stats.irtsums), not every cell evaluated: equal
    to each cell's logistic weighted (irt.expected_scores) to 1e-11 of a point, Rasch and 2PL."""
    rng = np.random.default_rng(9)
    theta, b = rng.normal(size=(5, 600)), rng.normal(0, 1.5, size=(5, 80))
    a = np.exp(rng.normal(0, 0.3, size=(5, 80))) if slopes else None
    weights = rng.poisson(1.0, size=(5, 80)).astype(float)
    assert irtsums._plan(theta, a, weights)[0] < 600  # the path taken
    found = irt.IrtFit(theta, b, np.ones_like(b) if a is None else a, 0, np.zeros((5, 0)), np.full(5, 2.0))
    np.testing.assert_allclose(_expected(theta, b, a, weights), irt.expected_scores(found, weights), rtol=0, atol=1e-11)
