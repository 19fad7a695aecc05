"""``--method bradley_terry`` over resampled tasks (what a board's rank ranges fit): arena-core's
aggregator against SciPy's L-BFGS-B maximising the same penalised likelihood on the same win
matrices, checked equal first (ratings within 0.001 Elo points; the board prints hundredths),
then timed in the same run; one fit on a board's win matrix against ``choix``'s ILSR on the same
wins (the prior's tied games against the reference as a player of its own, so both maximise
one likelihood; checked equal first); and the peak memory of the board's fit at 2,000 groups,
which a tasks x groups x groups array once took past 14.9 GiB.

    python benchmarks/bradley_terry.py              # 25, 100 and 200 groups x 500 tasks, 100 resamples
    python benchmarks/bradley_terry.py --groups 25 --resamples 20 --fit-groups 25
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))

from turns import median_time

from arena_plugins.aggregators import BradleyTerry, _outcomes, _wins


def board(groups: int, tasks: int) -> SimpleNamespace:
    """What the aggregator reads of a TaskTable: groups, tasks, per-task means and presence."""
    rng = np.random.default_rng(5)
    means = 100 / (1 + np.exp(-(rng.normal(0, 1, groups)[:, None] - rng.normal(0, 1, tasks)[None, :])))
    means = means + rng.normal(0, 5, (groups, tasks))
    return SimpleNamespace(groups=[f"g{k:04d}" for k in range(groups)], tasks=[f"t{k}" for k in range(tasks)],
                           means=means, present=np.ones((groups, tasks), dtype=bool))  # fmt: skip


def reference(table: SimpleNamespace, weights: np.ndarray, prior: float) -> np.ndarray:
    """Ratings per resample: the win matrix of the weighted tasks, then SciPy's L-BFGS-B on the
    negative penalised log-likelihood in the log-strengths (with its gradient), as Elo."""
    from scipy.optimize import minimize

    outcomes = _outcomes(table.means.T)  # (tasks, groups, groups)
    ratings = []
    for w in weights:
        wins = np.tensordot(w, outcomes, axes=1)
        games = wins + wins.T

        def loss(theta: np.ndarray, wins: np.ndarray = wins, games: np.ndarray = games) -> tuple[float, np.ndarray]:
            diff = theta[:, None] - theta[None, :]
            log_p = -np.logaddexp(0.0, -diff)  # log P(row beats column)
            own = -np.logaddexp(0.0, -theta)  # log P(beats the reference)
            other = -np.logaddexp(0.0, theta)
            value = (wins * log_p).sum() + prior / 2 * (own + other).sum()
            p = np.exp(log_p)
            gradient = wins.sum(axis=1) - (games * p).sum(axis=1) + prior / 2 - prior * np.exp(own)
            return -value, -gradient

        found = minimize(loss, np.zeros(len(table.groups)), jac=True, method="L-BFGS-B",
                         options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 10_000})  # fmt: skip
        logs = found.x / np.log(10)
        ratings.append(1000 + 400 * (logs - logs.mean()))
    return np.array(ratings)


def choix_ratings(wins: np.ndarray, prior: float) -> np.ndarray:
    """``choix``'s ILSR (Maystre and Grossglauser 2015) on ``wins`` with the prior's games as a
    reference player: half a win and half a loss of ``prior`` games against each group, so its
    maximum is the penalised likelihood's; the strengths on the aggregator's Elo scale."""
    import choix

    groups = len(wins)
    augmented = np.zeros((groups + 1, groups + 1))
    augmented[:groups, :groups] = wins
    augmented[:groups, groups] = augmented[groups, :groups] = prior / 2
    params = choix.ilsr_pairwise_dense(augmented, alpha=0.0, tol=1e-10)
    logs = (params[:groups] - params[groups]) / np.log(10)
    return 1000 + 400 * (logs - logs.mean())


def one_fit(aggregator: BradleyTerry, table: SimpleNamespace) -> None:
    """Print one fit on the board's win matrix (every task once) against choix's ILSR."""
    wins = _wins(table, np.ones((1, len(table.tasks))))

    def ours() -> np.ndarray:
        logs = np.log10(aggregator.fit(wins)[0])
        return 1000 + 400 * (logs - logs.mean())

    gap = float(np.max(np.abs(ours() - choix_ratings(wins[0], aggregator.prior))))
    assert gap < 1e-3, f"ratings differ from choix's by {gap}"
    mine, theirs = median_time(ours, 5), median_time(lambda: choix_ratings(wins[0], aggregator.prior), 5)
    print(f"{len(table.groups):>5} groups x {len(table.tasks)} tasks, one fit on the wins: arena-core {mine:.4f} s, "
          f"choix ILSR {theirs:.4f} s: {mine / theirs:.2f}x (ratings equal within {gap:.1e})")  # fmt: skip


def timed(work: object) -> float:
    start = time.perf_counter()
    work()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--groups", type=int, nargs="*", default=[25, 100, 200])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--fit-groups", type=int, nargs="*", default=[25, 100, 500, 2000],
                        help="groups of the one-fit rows against choix's ILSR")  # fmt: skip
    parser.add_argument("--memory-groups", type=int, default=2000, help="groups of the memory check (0: none)")
    options = parser.parse_args()
    aggregator = BradleyTerry()
    for groups in options.groups:
        table = board(groups, options.tasks)
        rng = np.random.default_rng(1)
        weights = rng.multinomial(options.tasks, np.full(options.tasks, 1 / options.tasks), options.resamples)
        weights = weights.astype(float)
        ours, theirs = aggregator.aggregate(table, weights), reference(table, weights, aggregator.prior)
        gap = float(np.max(np.abs(ours - theirs)))
        assert gap < 1e-3, f"ratings differ by {gap}"  # the board prints hundredths
        mine = min(timed(lambda t=table, w=weights: aggregator.aggregate(t, w)) for _ in range(2))
        scipy = min(timed(lambda t=table, w=weights: reference(t, w, aggregator.prior)) for _ in range(2))
        print(f"{groups:>5} groups x {options.tasks} tasks, {options.resamples} resamples: arena-core {mine:.2f} s, "
              f"SciPy L-BFGS-B {scipy:.2f} s: {mine / scipy:.2f}x (ratings equal within {gap:.1e})")  # fmt: skip
    for groups in options.fit_groups:
        one_fit(aggregator, board(groups, options.tasks))
    if options.memory_groups:
        table = board(options.memory_groups, 100)
        weights = np.ones((1, 100))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        aggregator.aggregate(table, weights)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(
            f"{options.memory_groups} groups x 100 tasks, one fit: {time.perf_counter() - start:.1f} s, "
            f"peak memory {peak / 1e6:.2f} GB (before the fit {before / 1e6:.2f} GB)"
        )


if __name__ == "__main__":
    main()
