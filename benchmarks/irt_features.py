"""The item response fit with task features (``arena predict --features``, ``arena tasks
--features``): arena-core's fit against SciPy's L-BFGS-B maximising the same penalised
likelihood (Rasch; abilities N(0, 2), difficulties N(X beta, sigma) with sigma at the value the
fit found, effects N(0, 2)), checked equal first (difficulties and effects within 0.001
logits), then timed in the same run.

    python benchmarks/irt_features.py                     # 100 groups x 10,000 tasks, half the cells run
    python benchmarks/irt_features.py --groups 25 --tasks 2000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))

from arena_core.stats import irt


def board(groups: int, tasks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(counts, solved, features): a Rasch board whose difficulties depend on 5 indicators and
    3 numbers, half its cells run."""
    rng = np.random.default_rng(3)
    features = np.c_[rng.integers(0, 2, (tasks, 5)).astype(float), rng.normal(0, 1, (tasks, 3))]
    b = features @ rng.normal(0, 0.5, 8) + rng.normal(0, 0.6, tasks)
    theta = rng.normal(0, 1, groups)
    solved = (rng.random((groups, tasks)) < 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))).astype(float)
    return (rng.random((groups, tasks)) < 0.5).astype(float), solved, features


def reference(counts: np.ndarray, solved: np.ndarray, features: np.ndarray, sigma: float) -> np.ndarray:
    """(abilities, difficulties, effects) at the mode SciPy's L-BFGS-B finds, with its gradient."""
    from scipy.optimize import minimize

    groups, tasks = counts.shape
    x = features - features.mean(axis=0)  # centred, as the fit centres them
    k = x.shape[1]
    wins = counts * solved

    def loss(v: np.ndarray) -> tuple[float, np.ndarray]:
        theta, b, beta = v[:groups], v[groups : groups + tasks], v[groups + tasks :]
        z = theta[:, None] - b[None, :]
        log_p, log_q = -np.logaddexp(0.0, -z), -np.logaddexp(0.0, z)
        residual = b - x @ beta
        value = (wins * log_p + (counts - wins) * log_q).sum()
        value -= (theta**2).sum() / 8 + (residual**2).sum() / (2 * sigma**2) + (beta**2).sum() / 8
        error = wins - counts * np.exp(log_p)
        gradient = np.concatenate([
            error.sum(axis=1) - theta / 4,
            -error.sum(axis=0) - residual / sigma**2,
            x.T @ residual / sigma**2 - beta / 4,
        ])  # fmt: skip
        return -value, -gradient

    found = minimize(loss, np.zeros(groups + tasks + k), jac=True, method="L-BFGS-B",
                     options={"gtol": 1e-9, "ftol": 1e-15, "maxiter": 20_000})  # fmt: skip
    return found.x


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=10_000)
    args = parser.parse_args()
    counts, solved, features = board(args.groups, args.tasks)
    ours = irt.fit(counts, solved, features=features)  # once untimed: imports, the first allocations
    started = time.perf_counter()
    ours = irt.fit(counts, solved, features=features)
    mine = time.perf_counter() - started
    started = time.perf_counter()
    theirs = reference(counts, solved, features, float(ours.residual_sd[0]))
    scipy_time = time.perf_counter() - started
    g, t = counts.shape
    gaps = [
        np.abs(ours.abilities[0] - theirs[:g]).max(),
        np.abs(ours.difficulties[0] - theirs[g : g + t]).max(),
        np.abs(ours.effects[0] - theirs[g + t :]).max(),
    ]
    assert max(gaps) < 1e-3, gaps
    print(f"{g} groups x {t:,} tasks, {features.shape[1]} features: arena-core {mine:.2f} s, "
          f"SciPy L-BFGS-B {scipy_time:.2f} s: {mine / scipy_time:.2f}x; largest gap {max(gaps):.1e} logits")  # fmt: skip


if __name__ == "__main__":
    main()
