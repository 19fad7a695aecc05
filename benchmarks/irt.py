"""Item response boards (``--method irt``, ``irt_2pl``): a single fit against SciPy's L-BFGS-B
maximising the same penalised likelihood (checked equal first: abilities within 1e-3 logits),
and a board's 1,000-resample intervals (Rasch and 2PL) against a single fit of the board, timed
in the same run (medians of three).

    python benchmarks/irt.py                      # 25, 100 and 500 groups x 500 tasks
    python benchmarks/irt.py --groups 25 --refits # also the intervals by 1,000 refits
    python benchmarks/irt.py --sparse             # 2,000 groups x 100,000 tasks, 500 tasks a group

``--sparse`` fits a board's cells that hold runs (:mod:`arena_core.stats.irtcells`) against
L-BFGS-B over the same cells (checked equal first), then ranks the board from its cells
(:mod:`arena_core.stats.celltable`) against one fit, with the process's peak memory.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))

from turns import median_time

from arena_core.stats import irt, irtcells
from arena_core.stats.celltable import CellTable
from arena_core.stats.leaderboard import leaderboard
from arena_core.stats.rankranges import uniform_counts
from arena_core.stats.tasktable import CELL_BYTES
from arena_plugins.aggregators import ItemResponse
from arena_plugins.intervals import StudentT


def board(groups: int, tasks: int) -> tuple[np.ndarray, np.ndarray]:
    """(counts, solved): verdicts of a 2PL with known parameters, four cells in five run."""
    rng = np.random.default_rng(3)
    theta, b, a = rng.normal(0, 1, groups), rng.normal(0, 1, tasks), np.exp(rng.normal(0, 0.4, tasks))
    solved = (rng.random((groups, tasks)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(float)
    return (rng.random((groups, tasks)) < 0.8).astype(float), solved


def reference(counts: np.ndarray, solved: np.ndarray, model: str) -> np.ndarray:
    """The abilities at the mode SciPy's L-BFGS-B finds (with the gradient) of the penalised
    likelihood :mod:`arena_core.stats.irt` states: abilities N(0, 2) (Rasch) or N(0, 1) (2PL),
    difficulties N(0, 2), log slopes N(0, 0.5)."""
    return _mode(
        model, counts * solved, counts, lambda theta, b: theta[:, None] - b[None, :], lambda x: x,
        lambda x: x.sum(axis=1), lambda x: x.sum(axis=0),
    )  # fmt: skip


def sparse_reference(cells: irtcells.Cells, model: str) -> np.ndarray:
    """:func:`reference` over the cells alone, each sum a ``bincount``."""
    g, t = cells.group, cells.task
    groups, tasks = len(cells.groups), len(cells.tasks)
    return _mode(
        model, cells.counts * cells.solved, cells.counts, lambda theta, b: theta[g] - b[t], lambda x: x[t],
        lambda x: np.bincount(g, x, groups), lambda x: np.bincount(t, x, tasks),
    )  # fmt: skip


def _mode(
    model: str, wins: np.ndarray, n: np.ndarray, gap: Any, at_task: Any, by_group: Any, by_task: Any
) -> np.ndarray:
    """The abilities L-BFGS-B finds, the cells laid out as ``gap(theta, b)`` lays them: a task's
    value at each cell is ``at_task(values)``, and ``by_group`` and ``by_task`` sum over the cells."""
    from scipy.optimize import minimize

    groups, tasks = len(by_group(n)), len(by_task(n))
    sd_theta = irt.ability_prior(model)
    slopes = model == "2pl"

    def loss(v: np.ndarray) -> tuple[float, np.ndarray]:
        theta, b = v[:groups], v[groups : groups + tasks]
        alpha = v[groups + tasks :] if slopes else np.zeros(tasks)
        a = at_task(np.exp(alpha))
        z = a * gap(theta, b)
        log_p, log_q = -np.logaddexp(0.0, -z), -np.logaddexp(0.0, z)
        value = (wins * log_p + (n - wins) * log_q).sum()
        value -= (
            (theta**2).sum() / (2 * sd_theta**2) + (b**2).sum() / 8 + (alpha**2).sum() / (2 * irt.slope_prior() ** 2)
        )
        error = wins - n * np.exp(log_p)
        parts = [by_group(error * a) - theta / sd_theta**2, -by_task(error * a) - b / 4]
        if slopes:
            parts.append(by_task(error * z) - alpha / irt.slope_prior() ** 2)
        return -value, -np.concatenate(parts)

    size = groups + tasks * (2 if slopes else 1)
    found = minimize(loss, np.zeros(size), jac=True, method="L-BFGS-B",
                     options={"gtol": 1e-9, "ftol": 1e-15, "maxiter": 20_000})  # fmt: skip
    return found.x[:groups]


def sparse_board(groups: int, tasks: int, each: int) -> irtcells.Cells:
    """The cells of a Rasch board where each group ran ``each`` tasks drawn at random, once each."""
    rng = np.random.default_rng(5)
    theta, b = rng.normal(0, 1, groups), rng.normal(0, 1.5, tasks)
    group = np.repeat(np.arange(groups), each)
    task = np.concatenate([np.sort(rng.choice(tasks, each, replace=False)) for _ in range(groups)])
    solved = (rng.random(len(group)) < 1 / (1 + np.exp(b[task] - theta[group]))).astype(float)
    names = [f"g{g:04d}" for g in range(groups)], [f"t{t:06d}" for t in range(tasks)]
    return irtcells.Cells(*names, group, task, np.ones(len(group)), solved)


def measure_sparse(groups: int, tasks: int, each: int) -> None:
    """Print the rows of one sparse board: a fit of its cells against L-BFGS-B over them."""
    cells = sparse_board(groups, tasks, each)
    for model in irt.MODELS:
        expected = sparse_reference(cells, model)
        gap = np.abs(irtcells.fit_cells(cells, model).abilities[0] - expected).max()
        assert gap < 1e-3, f"{model}: abilities differ by {gap}"
        ours = median_time(lambda m=model: irtcells.fit_cells(cells, m))
        scipy = median_time(lambda m=model: sparse_reference(cells, m), turns=1)
        print(f"{groups:,} groups x {tasks:,} tasks, {len(cells.group):,} cells, {model:<5} one fit: arena-core "
              f"{ours:.2f} s, SciPy L-BFGS-B {scipy:.2f} s: {ours / scipy:.2f}x (abilities within {gap:.0e})")  # fmt: skip
    for model in irt.MODELS:
        fit = median_time(lambda m=model: irtcells.fit_cells(cells, m))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        rows = leaderboard(cell_table(cells), ItemResponse(model), StudentT(), min_tasks=5)
        took = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        assert len(rows) == groups and all(r.ci_low <= r.ci_high for r in rows)
        print(f"{groups:,} groups x {tasks:,} tasks, {ItemResponse(model).name} board from its cells (scores, 1,000-"
              f"resample intervals, rank ranges, inversions): {took:.1f} s against one fit's {fit:.2f} s: "
              f"{took / fit:.0f}x; the process's peak {peak:.2f} GiB ({before / 2**20:.2f} GiB before); the dense "
              f"board would need {groups * tasks * (CELL_BYTES + 8) / 2**30:.0f} GiB")  # fmt: skip


def cell_table(cells: irtcells.Cells) -> CellTable:
    """The board of ``cells`` as a leaderboard reads it: one run a cell, scored by its verdict."""
    correctness = 100 * cells.solved
    return CellTable(
        cells.groups, cells.tasks, cells.group, cells.task, cells.counts.astype(np.int64), correctness,
        {"correctness": correctness}, np.ones(len(cells.group)),
    )  # fmt: skip


def measure(groups: int, tasks: int, refits: bool) -> None:
    """Print the rows of one board size."""
    counts, solved = board(groups, tasks)
    table = SimpleNamespace(counts=counts, dimension_means={"correctness": np.where(counts > 0, 100 * solved, np.nan)})
    for model in irt.MODELS:
        gap = np.abs(irt.fit(counts, solved, model=model).abilities[0] - reference(counts, solved, model)).max()
        assert gap < 1e-3, f"{model}: abilities differ by {gap}"
        ours = median_time(lambda m=model: irt.fit(counts, solved, model=m))
        scipy = median_time(lambda m=model: reference(counts, solved, m), turns=1 if groups > 100 else 3)
        print(f"{groups:>4} groups x {tasks} tasks, {model:<5} one fit: arena-core {ours:.3f} s, "
              f"SciPy L-BFGS-B {scipy:.3f} s: {ours / scipy:.2f}x (abilities within {gap:.0e})")  # fmt: skip
    weights = uniform_counts(np.random.default_rng(1), tasks, 1000)
    for model in irt.MODELS:
        fit = median_time(lambda m=model: irt.fit(counts, solved, model=m))
        kinds = [ItemResponse(model)] + ([ItemResponse(model, refits=True)] if refits else [])
        for aggregator in kinds:
            took = median_time(lambda a=aggregator: a.aggregate(table, weights), turns=1 if aggregator.refits else 3)
            print(f"{groups:>4} groups x {tasks} tasks, {aggregator.name}'s 1,000-resample intervals: "
                  f"{took:.3f} s against one fit's {fit:.3f} s: {took / fit:.1f}x")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, nargs="*", default=[25, 100, 500])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--refits", action="store_true", help="also time the 2PL intervals by 1,000 refits")
    parser.add_argument("--sparse", action="store_true", help="a fit of 2,000 groups x 100,000 tasks' cells instead")
    options = parser.parse_args()
    if options.sparse:
        measure_sparse(2_000, 100_000, 500)
        return
    for groups in options.groups:
        measure(groups, options.tasks, options.refits)


if __name__ == "__main__":
    main()
