"""Weights learned from votes (stats/learnedweights.py, ``arena weights fit``): recovered from
votes simulated with known weights over the example arena's dimensions, and a profile file that
every command takes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from scipy.optimize import minimize

from arena_core import Arena
from arena_core.cli import main
from arena_core.model.votes import Vote
from arena_core.stats.learnedweights import fit_from_votes, fit_weights

EXAMPLE = Path(__file__).parents[1] / "arena_core" / "examples"
DIMENSIONS = ("efficiency", "speed", "cost", "correctness")


def _example_evaluations():
    runs = [json.loads(line) for line in (EXAMPLE / "submissions.jsonl").read_text().splitlines()]
    tasks = {t["id"]: t for t in json.loads((EXAMPLE / "tasks.json").read_text())}
    arena = Arena()
    evaluations = list(arena.evaluate_many(runs, tasks, evaluated_at="2026-11-27T00:00:00Z"))
    return runs, evaluations, {name: p.weights for name, p in arena.scorer.profiles.items()}


def _simulated_votes(evaluations, weights_of, count: int, sharpness: float, seed: int) -> list[Vote]:
    """Votes between random pairs of runs of a task: a wins with logistic(k * (overall_a -
    overall_b) / 100), the overall the weighted sum under ``weights_of(evaluation)``."""
    rng = np.random.default_rng(seed)
    by_task: dict[str, list] = {}
    for e in evaluations:
        by_task.setdefault(e.task_id, []).append(e)
    tasks = sorted(by_task)
    votes = []
    for n in range(count):
        runs = by_task[tasks[rng.integers(len(tasks))]]
        a, b = (runs[i] for i in rng.choice(len(runs), 2, replace=False))
        weights = weights_of(a)
        margin = sum(weights[d] * (a.scores[d] - b.scores[d]) for d in DIMENSIONS) / 100
        winner = "a" if rng.random() < 1 / (1 + math.exp(-sharpness * margin)) else "b"
        votes.append(Vote(f"v{n}", a.task_id, a.submission_id, b.submission_id, winner, f"voter-{n % 80}"))
    return votes


def test_weights_behind_simulated_votes_are_recovered_within_their_intervals() -> None:
    """Five simulations of 5,000 votes from known weights: the estimates centre on them, and
    their 95% intervals hold them at about the nominal rate."""
    _, evaluations, profiles = _example_evaluations()
    truth = {"efficiency": 0.1, "speed": 0.2, "cost": 0.3, "correctness": 0.4}
    estimates, covered = [], []
    for seed in range(5):
        votes = _simulated_votes(evaluations, lambda _: truth, 5_000, sharpness=8.0, seed=seed)
        found = fit_from_votes(votes, evaluations, profiles, "tie", resamples=100, seed=seed)
        assert found.dimensions == DIMENSIONS and math.isclose(found.weights.sum(), 1.0)
        assert abs(found.sharpness - 8.0) < 1.5
        assert all(high - low < 0.2 for low, high in zip(found.low, found.high, strict=True))  # they say something
        estimates.append(found.weights)
        covered += [
            low <= truth[d] <= high for d, low, high in zip(found.dimensions, found.low, found.high, strict=True)
        ]
    np.testing.assert_allclose(np.mean(estimates, axis=0), [truth[d] for d in DIMENSIONS], atol=0.015)
    assert np.mean(covered) >= 0.8, np.mean(covered)
    # Held out, the true weights' direction predicts better than the spec's.
    assert found.fitted.log_loss < found.base.log_loss


def test_votes_from_the_spec_weights_learn_a_profile_that_ranks_as_the_spec_does() -> None:
    runs, evaluations, profiles = _example_evaluations()
    votes = _simulated_votes(evaluations, lambda e: profiles[e.weight_profile], 8_000, sharpness=8.0, seed=3)
    found = fit_from_votes(votes, evaluations, profiles, "tie", resamples=50, seed=4)
    learned = dict(zip(found.dimensions, found.weights, strict=True))
    tool_of = {r["id"]: r["tool"] for r in runs}

    def tool_means(weights_of) -> list[str]:
        totals: dict[str, list[float]] = {}
        for e in evaluations:
            w = weights_of(e)
            totals.setdefault(tool_of[e.submission_id], []).append(sum(w[d] * e.scores[d] for d in DIMENSIONS))
        return sorted(totals, key=lambda t: -np.mean(totals[t]))

    assert tool_means(lambda _: learned) == tool_means(lambda e: profiles[e.weight_profile])
    # Held out, the learned single vector predicts about as well as the spec's own weights.
    assert abs(found.fitted.accuracy - found.base.accuracy) < 0.03


def test_the_constrained_fit_is_scipys_bounded_maximum_likelihood() -> None:
    rng = np.random.default_rng(8)
    differences = rng.normal(0, 30, size=(3000, 4))
    differences[:, 0] += differences[:, 3]  # correlated: the first looks preferred at 0, but is not
    beta = np.array([0.0, 2.0, 0.5, 4.0])
    outcome = (rng.random(3000) < 1 / (1 + np.exp(-(differences / 100) @ (beta - np.array([0.8, 0, 0, 0]))))) * 1.0

    def objective(b: np.ndarray) -> tuple[float, np.ndarray]:
        m = (differences / 100) @ b
        value = -np.sum(outcome * -np.logaddexp(0, -m) + (1 - outcome) * -np.logaddexp(0, m))
        return value, -(differences / 100).T @ (outcome - 1 / (1 + np.exp(-m)))

    oracle = minimize(objective, np.ones(4), jac=True, method="L-BFGS-B", bounds=[(0, None)] * 4,
                      options={"ftol": 1e-15, "gtol": 1e-12})  # fmt: skip
    found = fit_weights(differences, outcome, np.arange(3000) % 30, ("w", "x", "y", "z"), np.zeros(3000), resamples=10)
    assert oracle.x[0] == 0.0  # the first dimension is preferred lower: held at the bound
    assert (differences / 100)[:, 0] @ (outcome - 0.5) > 0  # though its gradient at 0 points up
    np.testing.assert_allclose(found.weights * found.sharpness, oracle.x, atol=1e-4)


def test_no_preference_for_any_dimension_is_an_error_not_a_profile() -> None:
    differences = np.array([[10.0, 5.0], [-10.0, -5.0], [20.0, 1.0], [-20.0, -1.0]])
    outcome = np.array([0.0, 1.0, 0.0, 1.0])  # the lower scores always win
    try:
        fit_weights(differences, outcome, np.array([0, 1, 0, 1]), ("x", "y"), np.zeros(4), resamples=10)
    except Exception as error:
        assert "prefer higher scores on no dimension" in str(error)
    else:
        raise AssertionError("fitted weights from votes that prefer lower scores")


def test_arena_weights_fit_writes_a_profile_every_command_takes(tmp_path: Path) -> None:
    _, evaluations, _ = _example_evaluations()
    votes = _simulated_votes(evaluations, lambda _: {"efficiency": 0.1, "speed": 0.1, "cost": 0.1, "correctness": 0.7},
                             3000, sharpness=8.0, seed=5)  # fmt: skip
    (tmp_path / "votes.jsonl").write_text("".join(
        json.dumps({"id": v.id, "task_id": v.task_id, "a": v.a, "b": v.b, "winner": v.winner, "voter": v.voter}) + "\n"
        for v in votes))  # fmt: skip
    runner = CliRunner()
    out = runner.invoke(main, ["weights", "fit", "--example", "--votes", str(tmp_path / "votes.jsonl"),
                               "--resamples", "20", "-o", str(tmp_path / "learned.toml")])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "held-out accuracy" in out.output
    text = (tmp_path / "learned.toml").read_text()
    assert text.startswith("# Weights learned by `arena weights fit`") and "[weights.frontend_development]" in text
    scored = runner.invoke(main, ["-p", str(tmp_path / "learned.toml"), "score", "--example", "--format", "json"])
    assert scored.exit_code == 0, scored.output
    first = json.loads(scored.output)[0]
    assert first["breakdown"]["correctness_weight"] > 0.5 and first["provenance"]["profile"] == "learned"
    compared = runner.invoke(main, ["compare", "--example", "--b", str(tmp_path / "learned.toml")])
    assert compared.exit_code == 0 and "Comparing B = learned with A = default" in compared.output
