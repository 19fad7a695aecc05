"""A board held as its cells that hold runs (``arena_core.stats.celltable``): what ``--method
irt`` ranks when the dense ``(groups, tasks)`` table does not fit, with the dense board's figures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from arena_core.arena import Arena
from arena_core.cli import main
from arena_core.model.errors import ValidationError
from arena_core.model.records import Evaluation
from arena_core.stats import celltable, irtsums, room
from arena_core.stats.celltable import CellTable
from arena_core.stats.inversions import inversions, significant_differences
from arena_core.stats.leaderboard import leaderboard
from arena_core.stats.tasktable import Runs, TaskTable
from arena_plugins.aggregators import ItemResponse
from arena_plugins.intervals import StudentT


def _runs(groups: int, tasks: int, each: int, seed: int) -> Runs:
    """Groups of known abilities on ``each`` tasks apiece of ``tasks`` (one to three runs a
    cell), as real telemetry comes: some runs without a verdict, some without efficiency, a
    group on two tasks only (provisional), and one on tasks no other group ran (apart)."""
    rng = np.random.default_rng(seed)
    theta, b = rng.normal(0, 1.5, groups), rng.normal(0, 1.5, tasks + 6)
    group_of, task_of = [], []
    for g in range(groups):
        ran = rng.choice(tasks, 2 if g == 0 else each, replace=False)
        for t in ran:
            k = int(rng.integers(1, 4))
            group_of += [g] * k
            task_of += [t] * k
    group_of += [groups] * 6  # the group apart, on tasks of its own
    task_of += list(range(tasks, tasks + 6))
    theta = np.append(theta, 0.0)
    g, t = np.array(group_of), np.array(task_of)
    solved = rng.random(len(g)) < 1 / (1 + np.exp(b[t] - theta[g]))
    correctness = np.where(solved, 100.0, 0.0)
    correctness[rng.random(len(g)) < 0.05] = np.nan  # a harness error: no verdict
    efficiency = np.round(rng.uniform(0, 100, len(g)), 2)
    efficiency[rng.random(len(g)) < 0.1] = np.nan
    overall = np.round(np.nan_to_num(correctness) * 0.6 + np.nan_to_num(efficiency) * 0.4, 2)
    return Runs(
        [f"r{i}" for i in range(len(g))], [f"g{x:03d}" for x in g], [f"t{x:05d}" for x in t], overall,
        {"correctness": correctness, "efficiency": efficiency}, np.round(rng.uniform(0.5, 1, len(g)), 4),
    )  # fmt: skip


@pytest.mark.parametrize("model", ["rasch", "2pl"])
@pytest.mark.parametrize(("groups", "tasks", "each", "seed"), [(12, 150, 30, 0), (90, 1_500, 120, 1)])
def test_a_board_of_cells_is_the_dense_board(groups: int, tasks: int, each: int, seed: int, model: str) -> None:
    """Every figure of every row equals the dense board's: counts, coverage and means exactly;
    scores, intervals and rank ranges from the fit of the cells (Rasch to 1e-9 of a point; 2PL
    to 1e-4, as its fits of the cells and of the dense arrays agree to their tolerance), whose
    resamples' sums are interpolated in the ability past 70 groups (so both ways are compared)."""
    runs = _runs(groups, tasks, each, seed)
    dense = leaderboard(TaskTable.of(runs), ItemResponse(model), StudentT(), min_tasks=5)
    cells = leaderboard(CellTable.of(runs), ItemResponse(model), StudentT(), min_tasks=5)
    assert [r.group for r in cells] == [r.group for r in dense]
    assert any(r.provisional for r in dense) and any(r.apart for r in dense)
    for d, c in zip(dense, cells, strict=True):
        assert (c.n_runs, c.n_tasks, c.coverage, c.means, c.rank, c.provisional, c.apart) == (
            d.n_runs, d.n_tasks, d.coverage, d.means, d.rank, d.provisional, d.apart,
        )  # fmt: skip
        assert (c.rank_low, c.rank_high, c.tier) == (d.rank_low, d.rank_high, d.tier)
        near = 1e-9 if model == "rasch" else 1e-4
        assert np.allclose([c.score, c.ci_low, c.ci_high], [d.score, d.ci_low, d.ci_high], rtol=0, atol=near)
    assert len({r.ci_low for r in dense}) > groups // 2  # the intervals are the groups' own


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pairs_tested_over_the_cells_are_the_dense_tests(seed: int) -> None:
    """The paired t-tests read as sparse products of the cells name the same inversions and
    significant differences as the dense products, on a ranking that inverts correctness."""
    runs = _runs(40, 120, 60, seed)
    dense, cells = TaskTable.of(runs), CellTable.of(runs)
    correctness = [np.nanmean(row) for row in dense.dimension_means["correctness"]]
    worst_first = sorted(range(len(dense.groups)), key=lambda g: correctness[g])
    ranks = {g: i + 1 for i, g in enumerate(worst_first)}
    found = inversions(dense, ranks)
    assert sum(len(v) for v in found.values()) > 10  # the attack: many pairs ranked against correctness
    assert inversions(cells, ranks) == found
    ours = significant_differences(cells, worst_first, adjustment="bh")
    theirs = significant_differences(dense, worst_first, adjustment="bh")
    assert [(a, b) for a, b, _ in ours] == [(a, b) for a, b, _ in theirs]
    assert np.allclose([x for *_, x in ours], [x for *_, x in theirs], rtol=0, atol=1e-12)


def test_a_board_of_cells_tests_pairs_by_the_t_test_only() -> None:
    cells = CellTable.of(_runs(10, 50, 20, 0))
    with pytest.raises(ValidationError, match="test: expected t"):
        inversions(cells, {g: g + 1 for g in range(10)}, test="permutation")


@pytest.mark.parametrize(
    ("groups", "spread", "slope", "steep"),
    [(200, 1.0, None, 0), (300, 3.0, None, 0), (1_500, 8.0, None, 0), (800, 1.0, 3.0, 0), (2_000, 1.5, 2.0, 7)],
)
def test_sums_interpolated_in_the_ability_are_the_cells_own(
    groups: int, spread: float, slope: float | None, steep: int
) -> None:
    """The Chebyshev interpolant of each resample's sum, against every cell's logistic summed:
    equal to 1e-11 of the weights, from abilities within 6 logits to 50 apart, slopes to 3, and
    with ``steep`` tasks a resample of slope 30 (summed cell by cell beside the interpolant)."""
    rng = np.random.default_rng(groups)
    resamples, tasks = 3, 700
    theta = rng.normal(0, spread, (resamples, groups))
    b = rng.normal(0, 1.5, (resamples, tasks))
    a = None if slope is None else rng.uniform(0.2, slope, (resamples, tasks))
    if a is not None and steep:
        a[:, :steep] = 30.0
    w = rng.poisson(1.0, (resamples, tasks)).astype(float)
    half = float(np.ptp(theta)) / 2
    limit = 1.0 if a is None else irtsums._steepest_interpolated(a, w > 0, half, groups)
    assert irtsums._nodes_needed(half, limit) < groups  # interpolated, not evaluated cell by cell
    assert limit < 30 or not steep  # the steep tasks summed apart
    z = (np.ones_like(b) if a is None else a)[:, None, :] * (theta[:, :, None] - b[:, None, :])
    exact = np.einsum("rgt,rt->rg", 1 / (1 + np.exp(-z)), w)
    found = irtsums.ability_sums(theta, b, a, w)
    assert np.abs(found - exact).max() <= 1e-11 * w.sum(axis=1).max()


@pytest.mark.parametrize("slope", [None, 2.0])
@pytest.mark.parametrize("groups", [40, 600])
def test_a_task_a_resample_did_not_draw_is_not_evaluated(groups: int, slope: float | None) -> None:
    """A task of weight 0 adds nothing to a resample's sums and is left out of their cells (a
    bootstrap resample leaves out about a third of the tasks): here its parameters are NaN, which
    would make every sum NaN were its cells evaluated. The other tasks' sums are unchanged,
    cell by cell (40 groups) and interpolated (600)."""
    rng = np.random.default_rng(groups)
    resamples, tasks = 3, 400
    theta = rng.normal(0, 1.5, (resamples, groups))
    b = rng.normal(0, 1.5, (resamples, tasks))
    a = None if slope is None else rng.uniform(0.2, slope, (resamples, tasks))
    w = rng.poisson(1.0, (resamples, tasks)).astype(float)
    assert (w == 0).mean() > 0.25
    expected = irtsums.ability_sums(theta, b, a, w)
    b[w == 0] = np.nan
    if a is not None:
        a[w == 0] = np.nan
    found = irtsums.ability_sums(theta, b, a, w)
    assert np.isfinite(found).all()
    assert np.abs(found - expected).max() <= 1e-12 * w.sum(axis=1).max()


@pytest.mark.parametrize("slope", [None, 2.0])
def test_sums_shared_among_threads_are_the_same_to_the_bit(monkeypatch: pytest.MonkeyPatch, slope: float | None) -> None:
    """Past a size the resamples' sums are shared among threads (a core each): every figure is
    the same, to the bit, as one thread's, and the threads did run."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(5)
    resamples, groups, tasks = 6, 700, 900
    theta = rng.normal(0, 1.5, (resamples, groups))
    b = rng.normal(0, 1.5, (resamples, tasks))
    a = None if slope is None else rng.uniform(0.2, slope, (resamples, tasks))
    w = rng.poisson(1.0, (resamples, tasks)).astype(float)
    monkeypatch.setattr(irtsums, "_THREADED_CELLS", 10**12)
    alone = irtsums.ability_sums(theta, b, a, w)
    pools: list[ThreadPoolExecutor] = []

    class Pool(ThreadPoolExecutor):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            pools.append(self)

    monkeypatch.setattr(irtsums, "_THREADED_CELLS", 0)
    monkeypatch.setattr(irtsums, "usable_cores", lambda: 3)
    monkeypatch.setattr(irtsums, "ThreadPoolExecutor", Pool)
    shared = irtsums.ability_sums(theta, b, a, w)
    assert pools and all(len(pool._threads) > 1 for pool in pools)  # the work went to threads
    assert np.array_equal(shared, alone)


def test_arena_ranks_a_board_too_large_for_its_table_from_its_cells(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    """With memory for the cells but not for the dense table, ``irt`` ranks from the cells as
    it ranks with room (the same rows); a method that needs the table is refused as before."""
    evaluations = _evaluations(60, 3_000, 100)
    roomy = arena.leaderboard(evaluations, by="tool", method="irt")
    roomy_2pl = arena.leaderboard(evaluations, by="tool", method="irt_2pl")
    monkeypatch.setattr(room, "available_memory", lambda: 12 * 2**20)  # the dense table: about 18 MB
    with pytest.raises(room.BoardTooLarge, match=r"a board of 61 groups x 2,[0-9]{3} tasks"):
        arena.leaderboard(evaluations, by="tool")
    tight = arena.leaderboard(evaluations, by="tool", method="irt")
    assert [r.group for r in tight] == [r.group for r in roomy]
    assert np.allclose([[r.score, r.ci_low, r.ci_high] for r in tight], [[r.score, r.ci_low, r.ci_high] for r in roomy])
    assert [(r.rank_low, r.rank_high, r.n_runs) for r in tight] == [(r.rank_low, r.rank_high, r.n_runs) for r in roomy]
    slopes = arena.leaderboard(evaluations, by="tool", method="irt_2pl")
    assert [r.group for r in slopes] != [r.group for r in tight]  # the 2PL board's own order ...
    assert [r.group for r in slopes] == [r.group for r in roomy_2pl]  # ... as with room
    assert np.allclose([r.score for r in slopes], [r.score for r in roomy_2pl], rtol=0, atol=1e-4)
    with pytest.raises(room.BoardTooLarge):
        arena.leaderboard(evaluations, by="tool", method="irt_refits")  # refits read the dense arrays


def _evaluations(groups: int, tasks: int, each: int) -> list[Evaluation]:
    """Scored runs of :func:`_runs`'s board, grouped by tool."""
    runs = _runs(groups, tasks, each, 3)
    weights = {"correctness": 0.6, "efficiency": 0.4}
    return [
        Evaluation(
            runs.ids[i], runs.tasks[i], float(runs.overall[i]),
            {d: float(v[i]) for d, v in runs.dimensions.items() if not np.isnan(v[i])}, weights, "default",
            float(runs.overall[i]), "2026-01-01T00:00:00Z", tool=runs.groups[i],
        )  # fmt: skip
        for i in range(len(runs.ids))
    ]


def test_arena_leaderboard_irt_on_a_board_too_large_for_its_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``arena leaderboard --method irt``: with memory for the cells only, the same rows as with
    room; the default method, which needs the table, says so in one line and exits 2."""
    records, tasks = _records(30, 2_000, 60)
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    common = [str(tmp_path / "runs.jsonl"), "--tasks", str(tmp_path / "tasks.json"), "--format", "json", "-q"]
    roomy = CliRunner().invoke(main, ["leaderboard", *common, "--method", "irt"])
    assert roomy.exit_code == 0, roomy.output
    monkeypatch.setattr(room, "available_memory", lambda: int(3.5 * 2**20))
    made = CellTable.of
    refused = CliRunner().invoke(main, ["leaderboard", *common])
    assert refused.exit_code == 2 and "Error: arena leaderboard: a board of 30 groups x 1," in refused.stderr
    held: list[CellTable] = []
    monkeypatch.setattr(CellTable, "of", classmethod(lambda cls, runs: held.append(made(runs)) or held[-1]))
    tight = CliRunner().invoke(main, ["leaderboard", *common, "--method", "irt"])
    assert tight.exit_code == 0, tight.output
    assert len(held) == 1  # ranked from its cells
    _same_rows(json.loads(tight.stdout)["rows"], json.loads(roomy.stdout)["rows"])


def _records(tools: int, tasks: int, each: int) -> tuple[list[dict[str, object]], list[dict[str, str]]]:
    """Runs of ``tools`` tools, each on ``each`` of ``tasks`` tasks, better tools solving more;
    and the tasks."""
    rng = np.random.default_rng(4)
    records = [
        {"id": f"r{k}-{t}", "task_id": f"t{t:04d}", "tool": f"tool{k:02d}", "total_tokens": int(rng.integers(1e3, 1e5)),
         "tool_calls": 5, "iterations": 2, "execution_time": 30.0, "estimated_cost": 0.1,
         "success": bool(rng.random() < 0.2 + k / 40)}
        for k in range(tools) for t in rng.choice(tasks, each, replace=False)
    ]  # fmt: skip
    return records, [{"id": f"t{i:04d}", "category": "debugging", "difficulty": "beginner"} for i in range(tasks)]


def _same_rows(ours: list[dict[str, object]], theirs: list[dict[str, object]]) -> None:
    """The same groups in the same order, every figure equal (floats to 1e-9)."""
    assert [r["group"] for r in ours] == [r["group"] for r in theirs] and len(ours) == 30
    for a, b in zip(ours, theirs, strict=True):
        assert a.keys() == b.keys()
        for key, value in a.items():
            assert value == pytest.approx(b[key], abs=1e-9) if isinstance(value, float) else value == b[key], key


def test_a_streamed_board_too_large_for_its_table_is_ranked_from_its_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parquet past ``partition_rows`` is streamed, a partition at a time: the partitions'
    cells are joined as cells when the dense table does not fit, with the rows of the board
    read whole with room; ``--pairwise``, which reads the dense table, is refused in one line."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    records, tasks = _records(30, 2_000, 60)
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    pq.write_table(pa.Table.from_pylist(records), tmp_path / "runs.parquet", row_group_size=200)
    (tmp_path / "small.toml").write_text("partition_rows = 500\n")
    common = [str(tmp_path / "runs.parquet"), "--tasks", str(tmp_path / "tasks.json"), "--format", "json"]
    roomy = CliRunner().invoke(main, ["leaderboard", *common, "-q", "--method", "irt"])
    assert roomy.exit_code == 0, roomy.output
    monkeypatch.setattr(room, "available_memory", lambda: int(3.5 * 2**20))
    joined, join = [], CellTable.joined
    monkeypatch.setattr(CellTable, "joined", classmethod(lambda cls, parts: joined.append(len(parts)) or join(parts)))
    streamed = CliRunner().invoke(main, ["-c", str(tmp_path / "small.toml"), "leaderboard", *common, "--method", "irt"])
    assert streamed.exit_code == 0, streamed.output
    assert "streaming 1,800 runs" in streamed.stderr and joined[0] > 2  # the path was taken, the parts joined as cells
    _same_rows(json.loads(streamed.stdout)["rows"], json.loads(roomy.stdout)["rows"])
    pairs = CliRunner().invoke(
        main, ["-c", str(tmp_path / "small.toml"), "leaderboard", *common, "-q", "--method", "irt", "--pairwise"]
    )
    assert pairs.exit_code == 2 and pairs.stdout == ""
    [line] = pairs.stderr.splitlines()
    assert "is held as its cells, too large for the dense table this needs" in line, line


def test_a_sparse_board_is_ranked_from_its_cells_even_where_its_table_fits(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A million cells or more, at most a quarter of them run: ``irt`` ranks from the cells
    (quicker by far, and the same rows) without making the dense table; ``task_mean`` makes it."""
    evaluations = _evaluations(200, 50_000, 30)
    made: list[int] = []
    dense = TaskTable.of
    monkeypatch.setattr(TaskTable, "of", classmethod(lambda cls, runs, **kw: made.append(1) or dense(runs, **kw)))
    rows = arena.leaderboard(evaluations, by="tool", method="irt")
    assert not made and len(rows) == 201
    assert arena.leaderboard(evaluations, by="tool")[0].group and made  # the default method reads the table


def test_streamed_partitions_of_a_sparse_board_are_joined_as_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    """The streamed board's join takes the same rule, for a method that scores cells only."""
    from arena_core import streaming

    runs = _runs(20, 400, 30, 5)
    parts = [TaskTable.of(runs.select(np.array([t < "t00200" for t in runs.tasks]))),
             TaskTable.of(runs.select(np.array([t >= "t00200" for t in runs.tasks])))]  # fmt: skip
    monkeypatch.setattr(celltable, "SPARSE_CELLS", 1_000)
    joined = streaming._joined(list(parts), cells=True)
    assert isinstance(joined, CellTable) and isinstance(streaming._joined(list(parts), cells=False), TaskTable)
    whole = CellTable.of(runs)
    assert (joined.groups, joined.tasks) == (whole.groups, whole.tasks)
    assert np.array_equal(joined.group, whole.group) and np.array_equal(joined.task, whole.task)
    assert np.array_equal(joined.sums, whole.sums) and np.array_equal(joined.counts, whole.counts)
    for name in whole.dimension_means:
        assert np.array_equal(joined.dimension_means[name], whole.dimension_means[name], equal_nan=True)
    monkeypatch.setattr(celltable, "SPARSE_SHARE", 0.01)  # no longer sparse enough
    assert isinstance(streaming._joined(list(parts), cells=True), TaskTable)


def test_a_partition_too_large_for_its_table_is_handed_back_as_its_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Streamed with a method that scores cells, a partition whose own dense table does not fit
    is scored into its cells (here, in this process: one core, no workers), and the board of the
    joined cells is the board of the runs read whole."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from arena_core import streaming
    from arena_core.io.pieces import open_source
    from arena_core.model.records import Task
    from arena_core.model.serde import structure

    records, task_rows = _records(30, 2_000, 60)
    pq.write_table(pa.Table.from_pylist(records), tmp_path / "runs.parquet", row_group_size=200)
    arena, tasks = Arena(autoload=False), {t["id"]: structure(t, Task) for t in task_rows}
    stamp = "2026-01-01T00:00:00+00:00"
    whole = arena.leaderboard(arena.evaluate_many(records, tasks, evaluated_at=stamp), by="tool", method="irt")
    monkeypatch.setattr(streaming, "_cores", lambda: 1)
    monkeypatch.setattr(room, "available_memory", lambda: 2**19)  # no partition's dense table fits
    parts: list[int] = []
    made = CellTable.of
    monkeypatch.setattr(CellTable, "of", classmethod(lambda cls, runs: parts.append(len(runs.ids)) or made(runs)))
    source = open_source([tmp_path / "runs.parquet"])
    found = streaming.stream(arena, source, tasks, by="tool", stamp=stamp, limit=300, cells=True)
    assert isinstance(found.table, CellTable) and found.partitions > 4 and len(parts) == found.partitions
    with pytest.raises(room.BoardTooLarge):  # without cells, the partition's table is refused
        streaming.stream(arena, open_source([tmp_path / "runs.parquet"]), tasks, by="tool", stamp=stamp, limit=300)
    monkeypatch.setattr(room, "available_memory", lambda: None)
    streamed = arena.leaderboard(found.table, by="tool", method="irt")
    assert [(r.group, r.n_runs, r.n_tasks, r.rank_low, r.rank_high) for r in streamed] == [
        (r.group, r.n_runs, r.n_tasks, r.rank_low, r.rank_high) for r in whole
    ]
    assert np.allclose([[r.score, r.ci_low, r.ci_high] for r in streamed], [[r.score, r.ci_low, r.ci_high] for r in whole])
