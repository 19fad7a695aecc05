"""Community ratings at scale (docs/community.md): the Bradley-Terry fit with style control on
140,000 votes against statsmodels' logistic regression on the same design matrix (the
reference, timed in the same run), the bootstrap's cost, interval coverage over repeated
simulations, and vote hygiene against planted voters.

    python benchmarks/votes.py          # the full sizes (a few minutes)
    python benchmarks/votes.py --tiny   # every section on small sizes (what the tests run)
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))

from arena_core.model.votes import Vote
from arena_core.stats.battles import ELO_SCALE, Battles, bootstrap, fit, ratings_of
from arena_core.stats.voteboard import vote_board

#: LMArena's published style coefficients (tokens, lists, bold, headers) on the logit.
STYLE = np.array([0.039, 0.022, 0.019, 0.017])


def simulate(rng: np.random.Generator, groups: int, votes: int) -> tuple[Battles, np.ndarray]:
    theta = rng.normal(0.0, 0.6, groups)
    first = rng.integers(0, groups, votes)
    second = (first + rng.integers(1, groups, votes)) % groups
    style = rng.normal(size=(votes, len(STYLE)))
    p = 1 / (1 + np.exp(-(theta[first] - theta[second] + style @ STYLE)))
    tie = 0.1 * np.minimum(p, 1 - p)
    u = rng.random(votes)
    outcome = np.where(u < p - tie, 1.0, np.where(u < p + tie, 0.5, 0.0))
    return Battles(tuple(f"g{i}" for i in range(groups)), first, second, outcome, style, ("a", "b", "c", "d")), theta


def fit_against_reference(votes: int) -> None:
    import statsmodels.api as sm

    battles, _ = simulate(np.random.default_rng(1), 20, votes)
    start = time.perf_counter()
    ours = fit(battles)
    mine = time.perf_counter() - start
    design = np.zeros((votes, 20))
    design[np.arange(votes), battles.first] += 1
    design[np.arange(votes), battles.second] -= 1
    start = time.perf_counter()
    glm = sm.GLM(battles.outcome, np.hstack([design[:, :-1], battles.style]), family=sm.families.Binomial()).fit(
        cov_type="HC0"
    )
    reference = time.perf_counter() - start
    gap = float(np.max(np.abs(ours.beta - glm.params[19:])))
    print(f"1. fit with style control, {votes:,} votes, 20 groups: {mine:.3f} s; statsmodels GLM (reference) "
          f"{reference:.3f} s: {mine / reference:.2f}x the reference; largest coefficient gap {gap:.1e}")  # fmt: skip


def bootstrap_cost(votes: int, resamples: int) -> None:
    battles, _ = simulate(np.random.default_rng(2), 20, votes)
    estimate = fit(battles)
    start = time.perf_counter()
    bootstrap(battles, estimate, resamples, seed=3)
    took = time.perf_counter() - start
    plain = Battles(battles.groups, battles.first, battles.second, battles.outcome, np.zeros((votes, 0)))
    start = time.perf_counter()
    bootstrap(plain, fit(plain), resamples, seed=3)
    cells = time.perf_counter() - start
    print(f"2. bootstrap, {resamples} resamples of {votes:,} votes: with style {took:.2f} s "
          f"({took / resamples * 1000:.1f} ms each); without style, by cells, {cells:.2f} s")  # fmt: skip


def coverage(votes: int, repeats: int) -> None:
    rng = np.random.default_rng(4)
    held = []
    for _ in range(repeats):
        battles, theta = simulate(rng, 20, votes)
        estimate = fit(battles)
        spread = 1.959964 * np.sqrt(np.diag(estimate.covariance))
        held.extend(np.abs(ratings_of(estimate.theta) - ratings_of(theta)) <= ELO_SCALE * spread[:20])
    print(f"3. sandwich 95% intervals hold the true ratings {np.mean(held):.1%} of {len(held)} times "
          f"({repeats} simulations of {votes:,} votes)")  # fmt: skip


def bootstrap_coverage(votes: int, repeats: int, resamples: int) -> None:
    rng = np.random.default_rng(6)
    held = []
    for r in range(repeats):
        battles, theta = simulate(rng, 20, votes)
        drawn = ratings_of(bootstrap(battles, fit(battles), resamples, seed=r)[:, :20])
        low, high = np.quantile(drawn, 0.025, axis=0), np.quantile(drawn, 0.975, axis=0)
        truth = ratings_of(theta)
        held.extend((low <= truth) & (truth <= high))
    print(f"5. bootstrap 95% intervals ({resamples} resamples) hold the true ratings {np.mean(held):.1%} of "
          f"{len(held)} times ({repeats} simulations of {votes:,} votes with style)")  # fmt: skip


def hygiene(voters: int, per: int) -> None:
    rng = np.random.default_rng(5)
    theta = rng.normal(0, 100, 20) / ELO_SCALE
    planted = set(range(voters // 50))
    group_of, tokens, votes = {}, {}, []
    for voter in range(voters):
        for _ in range(per):
            ga = 0 if voter in planted else int(rng.integers(20))
            gb = (ga + int(rng.integers(1, 20))) % 20
            if rng.random() < 0.5:
                ga, gb = gb, ga
            task = f"t{len(votes)}"
            group_of[f"{task}/a"], group_of[f"{task}/b"] = f"g{ga:02d}", f"g{gb:02d}"
            tokens[f"{task}/a"], tokens[f"{task}/b"] = float(rng.integers(1000, 5000)), float(rng.integers(1000, 5000))
            if voter in planted:
                winner = "a" if ga == 0 else "b"
            else:
                winner = "a" if rng.random() < 1 / (1 + math.exp(-(theta[ga] - theta[gb]))) else "b"
            votes.append(Vote(f"v{len(votes)}", task, f"{task}/a", f"{task}/b", winner, f"u{voter}"))
    names = {f"u{v}" for v in planted}
    start = time.perf_counter()
    board = vote_board(votes, group_of, lambda run, _: tokens[run], resamples=50)
    took = time.perf_counter() - start
    flagged = {c.voter for c in board.hygiene.voters if c.flagged}
    honest = vote_board([v for v in votes if v.voter not in names], group_of, lambda run, _: tokens[run], resamples=10)
    raw = vote_board(votes, group_of, lambda run, _: tokens[run], resamples=10, keep_flagged=True)

    def target(b: object) -> float:
        return next(r.rating for r in b.rows if r.group == "g00")  # type: ignore[attr-defined]

    print(f"4. hygiene, {len(votes):,} votes by {voters:,} voters, 2% always backing one group: recall "
          f"{len(flagged & names) / len(names):.2f}, precision {len(flagged & names) / max(1, len(flagged)):.2f}; "
          f"the group's inflation {target(board) - target(honest):+.1f} Elo filtered, "
          f"{target(raw) - target(honest):+.1f} unfiltered; the board in {took:.1f} s")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tiny", action="store_true", help="small sizes: every section runs in seconds")
    tiny = parser.parse_args().tiny
    fit_against_reference(5_000 if tiny else 140_000)
    bootstrap_cost(3_000 if tiny else 140_000, 10 if tiny else 1000)
    coverage(3_000 if tiny else 140_000, 2 if tiny else 100)
    hygiene(250 if tiny else 5000, 20)
    bootstrap_coverage(2_000 if tiny else 20_000, 2 if tiny else 20, 50 if tiny else 1000)


if __name__ == "__main__":
    main()
