"""The item response fit over a board's cells that hold runs (arena tasks' difficulties and
--select): the dense fit's figures, and the mode of the same likelihood found by SciPy, on
boards whose dense arrays would not fit."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from arena_core.stats import irt, irtcells, room
from arena_core.stats.irtcells import Cells, fit_cells, task_information
from arena_core.stats.irttasks import fit_tasks, select_tasks
from arena_core.stats.room import BoardTooLarge
from arena_core.stats.tasktable import Runs, TaskTable, sorted_codes


def sparse_runs(groups: int, tasks: int, share: float, seed: int, *, repeats: int = 1, holes: bool = False) -> Runs:
    """Runs of a 2PL board where each group ran about ``share`` of the tasks, ``repeats``
    attempts a cell; ``holes``: some runs without a correctness score, one group without any."""
    rng = np.random.default_rng(seed)
    theta, b, a = rng.normal(0, 1, groups), rng.normal(0, 1.5, tasks), np.exp(rng.normal(0, 0.3, tasks))
    g, t = np.nonzero(rng.random((groups, tasks)) < share)
    g, t = np.repeat(g, repeats), np.repeat(t, repeats)
    verdicts = 100.0 * (rng.random(len(g)) < 1 / (1 + np.exp(-a[t] * (theta[g] - b[t]))))
    if holes:
        verdicts[rng.random(len(g)) < 0.2] = np.nan
        verdicts[g == 0] = np.nan
    order = rng.permutation(len(g))  # the runs arrive in no order
    g, t, verdicts = g[order], t[order], verdicts[order]
    return Runs(
        [f"r{i}" for i in range(len(g))], [f"g{x:03d}" for x in g], [f"t{x:04d}" for x in t],
        np.nan_to_num(verdicts), {"correctness": verdicts}, np.ones(len(g)),
    )  # fmt: skip


def dense(runs: Runs) -> tuple[TaskTable, np.ndarray, np.ndarray]:
    table = TaskTable.of(runs)
    found = irt.responses(table)
    assert found is not None
    return table, *found


@pytest.mark.parametrize("seed", range(3))
def test_the_cells_are_what_the_dense_fit_reads_of_the_board(seed: int) -> None:
    runs = sparse_runs(30, 80, 0.3, seed, repeats=3, holes=True)
    table, counts, solved = dense(runs)
    cells = Cells.of(runs)
    assert cells is not None and cells.groups == table.groups and cells.tasks == table.tasks
    held = counts > 0
    assert np.array_equal(np.flatnonzero(held), cells.group * len(cells.tasks) + cells.task)  # every cell once
    assert np.array_equal(counts[held], cells.counts)  # every run of a cell where some run has a verdict
    np.testing.assert_allclose(solved[held], cells.solved, rtol=0, atol=1e-12)
    assert not held[0].any() and "g000" in cells.groups  # a group without verdicts is still fitted (to its prior)
    coded = Cells.of(runs, (sorted_codes(runs.groups), sorted_codes(runs.tasks)))  # as task health hands them
    assert coded is not None and (coded.groups, coded.tasks) == (cells.groups, cells.tasks)
    for name in ("group", "task", "counts", "solved"):
        np.testing.assert_array_equal(getattr(coded, name), getattr(cells, name))
    assert Cells.of(Runs(runs.ids, runs.groups, runs.tasks, runs.overall, {}, runs.coverage)) is None


@pytest.mark.parametrize(("groups", "model"), [(40, "rasch"), (40, "2pl"), (120, "rasch"), (60, "2pl")])
def test_a_fit_of_the_cells_is_the_dense_fit(groups: int, model: str) -> None:
    runs = sparse_runs(groups, 150, 0.25, seed=groups, holes=True)
    _, counts, solved = dense(runs)
    cells = Cells.of(runs)
    assert cells is not None
    # Rasch takes the same Newton steps; 2PL the alternating steps, where the dense fit takes
    # Fisher scoring's: the same mode, each within its steps' tolerance of it
    close = 1e-9 if model == "rasch" else 2e-5
    expected, found = irt.fit(counts, solved, model=model), fit_cells(cells, model)
    for name in ("abilities", "difficulties", "discriminations"):
        np.testing.assert_allclose(getattr(found, name), getattr(expected, name), rtol=0, atol=close)
    weights = (np.arange(150) % 3 == 0) * 1.0  # --select's subset: the other tasks weigh nothing
    expected, found = irt.fit(counts, solved, weights[None], model), fit_cells(cells, model, weights)
    np.testing.assert_allclose(found.abilities, expected.abilities, rtol=0, atol=close)
    np.testing.assert_allclose(found.difficulties, expected.difficulties, rtol=0, atol=close)


def _scipy_abilities(cells: Cells, model: str) -> np.ndarray:
    """The mode of the penalised likelihood ``irt`` states, found by L-BFGS-B over the cells."""
    groups, tasks = len(cells.groups), len(cells.tasks)
    g, t, n = cells.group, cells.task, cells.counts
    wins, slopes = n * cells.solved, model == "2pl"
    sd = irt.ability_prior(model)

    def loss(v: np.ndarray) -> tuple[float, np.ndarray]:
        theta, b = v[:groups], v[groups : groups + tasks]
        alpha = v[groups + tasks :] if slopes else np.zeros(tasks)
        a = np.exp(alpha)
        z = a[t] * (theta[g] - b[t])
        value = (wins * -np.logaddexp(0.0, -z) + (n - wins) * -np.logaddexp(0.0, z)).sum()
        value -= (theta**2).sum() / (2 * sd**2) + (b**2).sum() / 8 + (alpha**2).sum() / (2 * irt.slope_prior() ** 2)
        error = wins - n / (1 + np.exp(-z))
        grad = [np.bincount(g, error * a[t], groups) - theta / sd**2, -np.bincount(t, error * a[t], tasks) - b / 4]
        if slopes:
            grad.append(np.bincount(t, error * z, tasks) - alpha / irt.slope_prior() ** 2)
        return -value, -np.concatenate(grad)

    size = groups + tasks * (2 if slopes else 1)
    found = optimize.minimize(loss, np.zeros(size), jac=True, method="L-BFGS-B",
                              options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 20_000})  # fmt: skip
    return found.x[:groups]


@pytest.mark.parametrize(("model", "newton"), [("rasch", True), ("rasch", False), ("2pl", True)])
def test_a_fit_of_the_cells_finds_the_mode_scipy_finds_by_either_method(
    model: str, newton: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 300 groups x 2,000 tasks, each group on about 20: past the dense fit's Newton bound.
    cells = Cells.of(sparse_runs(300, 2_000, 0.01, seed=11))
    assert cells is not None
    if not newton:
        monkeypatch.setattr(irtcells, "NEWTON_GROUPS", 10)  # alternating steps, as past 4,000 groups
    found = fit_cells(cells, model)
    assert found.iterations < 500  # converged, not stopped
    np.testing.assert_allclose(found.abilities[0], _scipy_abilities(cells, model), rtol=0, atol=2e-4)


def test_the_information_is_the_dense_one_a_block_of_tasks_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = sparse_runs(30, 90, 0.4, seed=4)
    _, counts, solved = dense(runs)
    found = irt.fit(counts, solved, model="2pl")
    monkeypatch.setattr(irtcells, "_CHUNK_CELLS", 30 * 7)  # blocks of 7 tasks, the last one short
    np.testing.assert_allclose(task_information(found), irt.information(found), rtol=1e-12, atol=0)


@pytest.mark.parametrize(("shift", "moved"), [(0.0, 0), (-720.0, 3), (800.0, 27)])
def test_rasch_information_from_one_exponential_a_group_and_a_task_is_the_dense_one(shift: float, moved: int) -> None:
    """Under Rasch each cell's ``exp(difficulty - ability)`` is a product of a task's and a
    group's exponential: equal to the dense information on a fitted board, and where the cells
    take their own exponentials (``moved`` groups moved by ``shift`` logits): a difficulty over
    700 logits above an ability, whose product would overflow (inf / inf), and most groups 800
    logits up, so that a group left below their mean has a factor that overflows."""
    runs = sparse_runs(30, 90, 0.4, seed=5)
    _, counts, solved = dense(runs)
    found = irt.fit(counts, solved, model="rasch")
    abilities = found.abilities.copy()
    abilities[0, :moved] += shift
    found = irt.IrtFit(abilities, found.difficulties, found.discriminations, 0, found.effects, found.residual_sd)
    information = task_information(found)
    assert np.isfinite(information).all()
    np.testing.assert_allclose(information, irt.information(found), rtol=1e-12, atol=1e-300)


def test_arena_tasks_fits_a_board_whose_dense_arrays_would_not_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = sparse_runs(250, 4_000, 0.005, seed=8)  # 1,000,000 cells, about 5,000 of them run
    monkeypatch.setattr(room, "available_memory", lambda: 8 * 2**20)
    with pytest.raises(BoardTooLarge):
        TaskTable.of(runs)  # the attack: the dense table is refused at this room
    abilities, fits = fit_tasks(runs)
    cells = Cells.of(runs)
    assert cells is not None
    assert len(abilities) == 250 and [f.task for f in fits] == cells.tasks
    np.testing.assert_allclose([f.difficulty for f in fits], fit_cells(cells).difficulties[0], rtol=0, atol=0)
    chosen = select_tasks(runs, 500)
    assert len(chosen.tasks) == 500 and chosen.kendall_tau > 0.3
    information = {f.task: f.information for f in fits}
    assert min(information[t] for t in chosen.tasks) >= sorted(information.values())[-500]


@pytest.mark.parametrize("way", ["fisher", "fisher, then alternating", "alternating"])
def test_the_board_s_2pl_fit_finds_the_mode_scipy_finds_whichever_steps_it_takes(
    way: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The board's 2PL fit by Fisher scoring, by alternating steps (past ``FISHER_GROUPS``), and
    by alternating steps from where Fisher scoring stopped unconverged (``FISHER_STEPS``)."""
    runs = sparse_runs(80, 200, 0.6, seed=13)
    _, counts, solved = dense(runs)
    cells = Cells.of(runs)
    assert cells is not None
    if way == "alternating":
        monkeypatch.setattr(irt, "FISHER_GROUPS", 10)
    elif way != "fisher":
        monkeypatch.setattr(irt, "FISHER_STEPS", 3)  # too few: alternating steps go on
    calls: list[int] = []
    alternating = irt._alternating_chunk
    monkeypatch.setattr(irt, "_alternating_chunk", lambda n, *args: calls.append(len(n)) or alternating(n, *args))
    found = irt.fit(counts, solved, model="2pl")
    assert found.iterations < 500 and bool(calls) == (way != "fisher")
    np.testing.assert_allclose(found.abilities[0], _scipy_abilities(cells, "2pl"), rtol=0, atol=2e-4)
