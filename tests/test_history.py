"""Baseline versions, re-derived scores, the arena's history and drift alerts."""

from __future__ import annotations

import json
import math
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest
from clirun import run_arena

from arena_core import Arena, ArenaError
from arena_core.examples import SUBMISSIONS, TASKS
from arena_core.io.readers import read_submissions, read_tasks
from arena_core.store import MemoryStore, SQLiteStore, Store
from arena_core.store.drift import BaselineDrift, RankDrift, group_means, top_groups
from arena_core.store.history import baseline_history, group_history, rescore

RUNS = read_submissions(SUBMISSIONS)
TASK_MAP = read_tasks(TASKS)


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "postgresql":
        from arena_core.store.postgres import PostgresStore

        return PostgresStore(request.getfixturevalue("postgres_server")())
    return MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "arena.db")


def _three_batches(arena: Arena, store: Store) -> list:
    """The example arena in three batches, each with runs of every task: the baselines move."""
    return [arena.process(RUNS[k::3], store=store, tasks=TASK_MAP if k == 0 else None) for k in range(3)]


def test_every_stored_score_re_derives_from_its_baseline_version(store: Store) -> None:
    arena = Arena(autoload=False)
    batches = _three_batches(arena, store)
    assert {e.baseline_version for e in batches[0].evaluations} == {1}
    assert {e.baseline_version for e in batches[2].evaluations} == {2}
    moved = 0
    with store.transaction(write=False) as tx:
        current = {t: tx.get_baseline(t) for t in TASK_MAP}
    for result in batches:
        for evaluation in result.evaluations:
            stored, again = rescore(arena, store, evaluation.task_id, evaluation.submission_id)
            assert stored.baseline_version == evaluation.baseline_version
            assert (again.overall_score, again.scores) == (stored.overall_score, stored.scores)
            submission = next(r for r in RUNS if r.id == evaluation.submission_id)
            today = arena.evaluate(submission, TASK_MAP[evaluation.task_id], current[evaluation.task_id])
            moved += today.overall_score != stored.overall_score
    assert moved > 100  # against today's baseline most scores differ: the versions are what re-derives them


def test_every_replaced_baseline_is_kept(store: Store) -> None:
    arena = Arena(autoload=False)
    batches = _three_batches(arena, store)
    history = baseline_history(store)
    assert sorted(history) == sorted(TASK_MAP)
    for task_id, versions in history.items():
        assert [b.version for b in versions] == [1, 2, 3]
        assert versions[-1] == batches[2].baselines[task_id]
        assert [b.submission_count for b in versions] == [5, 10, 15]
    assert baseline_history(store, tasks={"backend-002"}).keys() == {"backend-002"}


def test_the_history_is_the_board_as_each_batch_left_it_and_the_store_board_is_todays(store: Store) -> None:
    """Each standing is the board of the evaluations as they were made on arrival; the store's
    board is every run against today's baselines: the board of all the runs given at once."""
    arena = Arena(autoload=False)
    _three_batches(arena, store)
    standings = group_history(arena, store)
    assert [(s.batch, s.runs) for s in standings] == [(1, 60), (2, 120), (3, 180)]
    assert standings[0].evaluated_at < standings[1].evaluated_at < standings[2].evaluated_at
    final = {g.group: (g.score, g.rank) for g in standings[-1].groups}
    with store.transaction(write=False) as tx:
        on_arrival = [e for t in tx.task_ids() for e in tx.evaluations(t)]
    assert final == {g.group: (g.score, g.rank) for g in arena.leaderboard(on_arrival)}
    today = {g.group: (g.score, g.rank) for g in arena.leaderboard(store=store)}
    assert today == {g.group: (g.score, g.rank) for g in arena.leaderboard(arena.evaluate_many(RUNS, TASK_MAP))}
    assert today != final  # the first batches were scored against defaults: arrival moved the board
    first = {g.group: g.score for g in standings[0].groups}
    stored = [e for r in [arena.leaderboard(_first_batch(store))] for e in r]
    assert first == {g.group: g.score for g in stored}
    assert [s.batch for s in group_history(arena, store, last=2)] == [2, 3]
    one = group_history(arena, store, tasks={"backend-002"}, by="model")
    assert [s.runs for s in one] == [5, 10, 15]


def _first_batch(store: Store) -> list:
    with store.transaction(write=False) as tx:
        everything = [e for t in tx.task_ids() for e in tx.evaluations(t)]
    first = min(e.evaluated_at for e in everything)
    return [e for e in everything if e.evaluated_at == first]


def test_group_means_of_the_sqlite_store_match_a_direct_computation(tmp_path: Path) -> None:
    arena, store, memory = Arena(autoload=False), SQLiteStore(tmp_path / "a.db"), MemoryStore()
    for target in (store, memory):
        _three_batches(arena, target)
        arena.process(RUNS[:10], store=target, replace=True)  # replaced evaluations refresh their sums
    with store.transaction(write=False) as tx, memory.transaction(write=False) as direct:
        fast, slow = sorted(group_means(tx)), sorted(group_means(direct))
    assert [(t, n) for t, _, n in fast] == [(t, n) for t, _, n in slow]
    assert [m for _, m, _ in fast] == pytest.approx([m for _, m, _ in slow], abs=1e-9)


def test_baseline_drift_is_reported_after_the_commit_with_its_versions(store: Store) -> None:
    arena = Arena({"drift_top_k": 0}, autoload=False)
    runs = [{"id": f"a{i}", "task_id": "t", "tool": "x", "total_tokens": 10_000, "tool_calls": 10,
             "execution_time": 100.0, "estimated_cost": 0.1} for i in range(6)]
    assert arena.process(runs, store=store, tasks={"t": {"id": "t"}}).drift == ()
    slower = [{**r, "id": f"b{i}", "execution_time": 124.0} for i, r in enumerate(runs * 3)]
    assert arena.process(slower, store=store).drift == ()  # 100 -> 124: within 25 %
    slowest = [{**r, "id": f"c{i}", "execution_time": 400.0} for i, r in enumerate(runs * 8)]
    [alert] = arena.process(slowest, store=store).drift
    assert alert == BaselineDrift("t", "median_execution_time", 124.0, 400.0, 2, 3)
    assert alert.change == pytest.approx(400 / 124 - 1)
    assert str(alert) == "baseline of 't': median_execution_time moved 124 -> 400 (+223%; version 2 -> 3)"
    quiet = Arena({"drift_threshold": 0, "drift_top_k": 0}, autoload=False)
    assert quiet.process([{**r, "id": f"d{i}", "execution_time": 9000.0} for i, r in enumerate(runs * 30)],
                         store=store).drift == ()


def test_a_default_baseline_becoming_measured_is_not_drift() -> None:
    arena, store = Arena({"drift_top_k": 0}, autoload=False), MemoryStore()
    few = [{"id": f"a{i}", "task_id": "t", "total_tokens": 900, "tool_calls": 2} for i in range(3)]
    arena.process(few, store=store, tasks={"t": {"id": "t"}})  # 3 runs: the default baseline
    result = arena.process([{**r, "id": f"b{i}"} for i, r in enumerate(few)], store=store)
    assert result.baselines["t"].defaulted == ("execution_time", "estimated_cost", "iterations")  # tokens measured
    assert result.drift == ()  # tokens went from the default 50,000 to 900, but the default is no yardstick


def test_rank_drift_when_the_top_reorders(store: Store) -> None:
    arena = Arena({"drift_threshold": 0, "drift_top_k": 2}, autoload=False)
    tasks = {f"t{k}": {"id": f"t{k}"} for k in range(3)}

    def runs(prefix: str, scores: dict[str, int], n: int = 2) -> list[dict]:
        return [{"id": f"{prefix}-{tool}-{t}-{i}", "task_id": t, "tool": tool, "total_tokens": tokens,
                 "tool_calls": 5, "execution_time": 60.0, "estimated_cost": 0.01}
                for tool, tokens in scores.items() for t in tasks for i in range(n)]

    first = arena.process(runs("a", {"alpha": 1000, "beta": 5000, "gamma": 20000}), store=store, tasks=tasks)
    assert first.drift == ()  # no ranked tools before: nothing to reorder
    with store.transaction(write=False) as tx:
        assert top_groups(group_means(tx), 2, 3) == ("alpha", "beta")
    steady = arena.process(runs("b", {"alpha": 1000, "beta": 5000}), store=store)
    assert steady.drift == ()
    # gamma's ten new runs per task score 100: its per-task means rise from 82.5 past beta's 96.32
    [alert] = arena.process(runs("c", {"gamma": 100}, n=10), store=store).drift
    assert alert == RankDrift(("alpha", "beta"), ("alpha", "gamma"))
    assert str(alert) == "top 2 tools reordered: alpha, beta -> alpha, gamma"


def test_a_failed_batch_raises_no_alert_and_stores_no_version(tmp_path: Path) -> None:
    arena, store = Arena(autoload=False), SQLiteStore(tmp_path / "a.db")
    arena.process(RUNS[:60], store=store, tasks=TASK_MAP)
    bad = [*RUNS[60:120], {"id": "x", "task_id": "nowhere", "total_tokens": 1, "tool_calls": 1}]
    with pytest.raises(ArenaError, match="nowhere"):
        arena.process(bad, store=store)
    assert {len(v) for v in baseline_history(store).values()} == {1}


def test_rescore_says_what_it_cannot_do(tmp_path: Path) -> None:
    arena, store = Arena(autoload=False), SQLiteStore(tmp_path / "a.db")
    arena.process(RUNS[:30], store=store, tasks=TASK_MAP)
    with pytest.raises(ArenaError, match="no stored evaluation of submission 'nope' for task 'backend-002'"):
        rescore(arena, store, "backend-002", "nope")


_VERSION_2_DROPPED = ["baseline_versions", "board_cells"]


def test_a_version_2_database_gets_versions_and_history_when_opened(tmp_path: Path) -> None:
    arena, path = Arena(autoload=False), tmp_path / "old.db"
    arena.process(RUNS[::2], store=SQLiteStore(path), tasks=TASK_MAP)
    with sqlite3.connect(path) as connection:  # back to what version 2 wrote
        for table in _VERSION_2_DROPPED:
            connection.execute(f"DROP TABLE {table}")
        for column in ("model", "evaluated_at", "baseline_version"):
            connection.execute(f"ALTER TABLE evaluations DROP COLUMN {column}")
        rows = connection.execute("SELECT key, data FROM baselines").fetchall()
        for key, data in rows:
            record = json.loads(data)
            del record["version"]
            connection.execute("UPDATE baselines SET data = ? WHERE key = ?", (json.dumps(record), key))
        connection.execute("PRAGMA user_version = 2")
    store = SQLiteStore(path)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 9
    assert {len(v) for v in baseline_history(store).values()} == {1}
    later = arena.process(RUNS[1::2], store=store)
    assert {e.baseline_version for e in later.evaluations} == {1}
    assert all(len(v) == 2 for v in baseline_history(store).values())
    assert [s.runs for s in group_history(arena, store)] == [90, 180]
    stored, again = rescore(arena, store, later.evaluations[0].task_id, later.evaluations[0].submission_id)
    assert again.overall_score == stored.overall_score


def _arena(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_arena(*args, cwd=cwd)


def test_ingest_prints_drift_and_history_shows_each_batch(tmp_path: Path) -> None:
    lines = SUBMISSIONS.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(r) for r in records[::2]) + "\n")
    costly = [{**r, "estimated_cost": r["estimated_cost"] * 3} for r in records[1::2] if "estimated_cost" in r]
    (tmp_path / "b.jsonl").write_text("\n".join(json.dumps(r) for r in costly) + "\n")
    first = _arena("ingest", "a.jsonl", "--tasks", str(TASKS), "--store", "arena.db", cwd=tmp_path)
    assert first.returncode == 0 and "drift:" not in first.stderr, first.stderr
    second = _arena("ingest", "b.jsonl", "--store", "arena.db", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    alerts = [line for line in second.stderr.splitlines() if line.startswith("drift: ")]
    assert len([a for a in alerts if "median_cost" in a]) == 12  # every task's median cost doubled
    assert all("version 1 -> 2" in a for a in alerts if "median_cost" in a)
    shown = _arena("history", "--store", "arena.db", "--task", "backend-002", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    table = shown.stdout.splitlines()
    assert table[0] == "Leaderboard by tool after each batch (task_mean; #rank, * provisional)"
    assert [line.split()[0] for line in table[3:5]] == ["1", "2"] and table[5] == ""
    assert sum(line.startswith("backend-002") for line in table) == 2
    data = json.loads(_arena("history", "--store", "arena.db", "--format", "json", cwd=tmp_path).stdout)
    assert [b["runs"] for b in data["batches"]] == [90, 90 + len(costly)] == [90, 179]  # one run never had a cost
    assert [v["version"] for v in data["baselines"]["backend-002"]] == [1, 2]
    missing = _arena("history", "--store", "none.db", cwd=tmp_path)
    assert missing.returncode == 2 and "none.db" in missing.stderr and "Traceback" not in missing.stderr


def test_a_stored_score_card_explains_the_score_with_its_baseline_version(tmp_path: Path) -> None:
    from arena_core.report.card import recompute

    arena, store = Arena(autoload=False), SQLiteStore(tmp_path / "arena.db")
    batches = _three_batches(arena, store)
    first = batches[0].evaluations[0]
    shown = _arena("card", first.submission_id, "--store", "arena.db", "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    card = json.loads(shown.stdout)
    [version_1] = [b for b in baseline_history(store)[first.task_id] if b.version == 1]
    current = batches[2].baselines[first.task_id]
    assert card["baseline_version"] == 1 and card["overall_score"] == first.overall_score
    assert card["baseline"]["total_tokens"]["median_tokens"] == version_1.median_tokens != current.median_tokens
    assert round(recompute(card), 2) == first.overall_score  # the stored score, re-derived by hand
    text = _arena("card", first.submission_id, "--store", "arena.db", cwd=tmp_path).stdout
    assert "Baseline (stored version 1) of 5 submissions" in text
    unknown = _arena("card", "nope", "--store", "arena.db", cwd=tmp_path)
    assert unknown.returncode == 2 and "no stored submission 'nope'" in unknown.stderr


@pytest.fixture(params=["sqlite", "postgresql"])
def cell_store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    """The stores that keep the leaderboard's cells (store/cells.py)."""
    if request.param == "postgresql":
        from arena_core.store.postgres import PostgresStore

        return PostgresStore(request.getfixturevalue("postgres_server")())
    return SQLiteStore(tmp_path / "arena.db")


def _cells_and_runs(arena: Arena, store: Store, by: str) -> tuple:
    """The table from the store's cells and the table of its evaluations, computed anew."""
    from arena_core.stats.runs import gather_runs
    from arena_core.stats.tasktable import TaskTable
    from arena_core.store.cells import task_table

    with store.transaction(write=False) as tx:
        cells = task_table(tx.board_cells(by))
        stored = [e for t in tx.task_ids() for e in tx.evaluations(t)]  # as they were made on arrival
    return cells, TaskTable.of(gather_runs(arena.scorer, stored, by))


def test_the_cells_stay_exact_however_often_evaluations_are_replaced(cell_store: Store) -> None:
    """Every figure of the board the cells give equals, to the bit, the board computed from the
    stored evaluations, after each run was replaced many times (each replacement takes the old
    figures away and adds the new ones): scores of hundredths are summed as whole numbers.
    Float sums drift here (checked: the float columns differ from the exact sums in the last
    bits in some cell)."""
    from arena_core import to_dict
    from arena_core.store.cells import SUMS

    arena = Arena(autoload=False)
    arena.process(RUNS, store=cell_store, tasks=TASK_MAP)
    rng = np.random.default_rng(3)
    for round_ in range(6):
        chosen = rng.choice(len(RUNS), 40, replace=False)
        changed = [
            {**to_dict(RUNS[i]), "total_tokens": int(RUNS[i].total_tokens * rng.uniform(0.5, 1.7))} for i in chosen
        ]
        arena.process(changed, store=cell_store, replace=True)
    for by in ("tool", "model"):
        cells, direct = _cells_and_runs(arena, cell_store, by)
        assert (cells.groups, cells.tasks) == (direct.groups, direct.tasks)
        assert np.array_equal(cells.counts, direct.counts)
        assert np.array_equal(cells.sums, direct.sums)  # exact: not approximately
        assert np.array_equal(cells.coverage_means, direct.coverage_means, equal_nan=True)
        assert cells.dimension_means.keys() == direct.dimension_means.keys()
        for name, means in cells.dimension_means.items():
            assert np.array_equal(means, direct.dimension_means[name], equal_nan=True), name
        assert [to_dict(r) for r in arena.leaderboard(cells)] == [to_dict(r) for r in arena.leaderboard(direct)]
    with cell_store.transaction(write=False) as tx:
        rows = tx.board_cells("tool")
    floats = np.array([row[2 + SUMS.index("overall")] for row in rows], dtype=float)
    exact = np.array([row[2 + SUMS.index("overall_units")] for row in rows]) / 100
    assert not np.array_equal(floats, exact)  # what the float sums alone would have given


def test_cells_summed_from_columns_are_the_ledger_s_to_the_bit() -> None:
    """``batch_cells`` (a board's cells from its scores' columns) gives the rows a ledger adding
    each evaluation gives, for figures of finer grain than the units, NaN and out of range
    ones too (the float sums then count, in the ledger's order)."""
    from arena_core.store.cells import CellLedger, batch_cells

    batch = _odd_batch()
    codes = batch.task_codes
    inexact_seen = 0
    for task in range(len(batch.task_list)):
        rows = np.flatnonzero(codes == task)
        if not len(rows):
            continue
        start, stop = int(rows[0]), int(rows[-1]) + 1
        assert stop - start == len(rows)  # the example's runs come a task at a time
        ledger = CellLedger()
        for i in range(start, stop):
            ledger.add(batch[i], 1)
        expected = [(*key, *sums) for key, sums in ledger.changes.items()]
        found = batch_cells(batch, start, stop)
        assert sorted(map(repr, found)) == sorted(map(repr, expected))  # repr: NaN equal, floats to the bit
        assert [type(v) for v in found[0]] == [type(v) for v in expected[0]]
        inexact_seen += sum(row[4] for row in found)
    assert inexact_seen > 0


def test_a_ledger_adding_evaluations_at_once_sums_as_adding_each_to_the_bit() -> None:
    """``CellLedger.add_all`` (a stored batch's evaluations) gives the changes ``add`` gives
    one evaluation at a time: in any order of tasks and groups, with cells the transaction
    changed before (a replaced evaluation taken away), taking away too, and figures of finer
    grain, NaN, out of range and unmeasured."""
    import attrs

    from arena_core.store.cells import CellLedger

    batch = _odd_batch()
    rng = np.random.default_rng(9)
    evaluations = [batch[int(i)] for i in rng.permutation(batch.size)]
    evaluations[3] = attrs.evolve(evaluations[3], scores={k: v for k, v in evaluations[3].scores.items() if k != "cost"})
    for sign in (1, -1):
        one, many = CellLedger(), CellLedger()
        for ledger in (one, many):  # cells changed before: evaluations of the batch taken away
            for e in evaluations[:7]:
                ledger.add(e, -sign)
        for e in evaluations:
            one.add(e, sign)
        many.add_all(evaluations, sign)
        assert sorted(map(repr, many.changes.items())) == sorted(map(repr, one.changes.items()))  # floats to the bit
        assert {k: [type(v) for v in sums] for k, sums in many.changes.items()} == {
            k: [type(v) for v in sums] for k, sums in one.changes.items()
        }
        fresh, each = CellLedger(), CellLedger()  # no cell changed before
        fresh.add_all(evaluations, sign)
        for e in evaluations:
            each.add(e, sign)
        assert sorted(map(repr, fresh.changes.items())) == sorted(map(repr, each.changes.items()))
        assert any(math.isnan(sums[2]) for sums in fresh.changes.values()) and any(v[1] for v in fresh.changes.values())


def _odd_batch():
    """The example's batch with overall scores of finer grain than hundredths, NaN and out of
    range, coverage of finer grain than its units, and speed scores off by a thousandth."""
    import attrs

    batch = Arena(autoload=False).evaluate_many(RUNS, TASK_MAP)
    rng = np.random.default_rng(5)
    overall = batch.overall.copy()
    odd = rng.choice(batch.size, 40, replace=False)
    overall[odd[:30]] += rng.uniform(-1, 1, 30) / 3  # finer than hundredths
    overall[odd[30:35]] = np.nan
    overall[odd[35:]] = 3e6
    coverage = batch.coverage.copy()
    coverage[odd[::4]] = 1 / 7
    speed = batch.scores["speed"]
    scores = {**batch.scores, "speed": np.where(np.arange(batch.size) % 5 == 0, speed + 1e-3, speed)}
    return attrs.evolve(batch, overall=overall, coverage=coverage, scores=scores)


def test_the_cells_follow_a_repricing_that_replaces_every_evaluation_it_read(cell_store: Store) -> None:
    """Re-pricing reads a task's evaluations, then replaces them all: their figures leave the
    cells as read (not parsed again), and the cells still equal the evaluations' board."""
    from arena_core.store.repricing import reprice

    arena = Arena(autoload=False)
    arena.process(RUNS, store=cell_store, tasks=TASK_MAP)
    before, _ = _cells_and_runs(arena, cell_store, "tool")
    done = reprice(Arena({"cost_source": "priced"}, autoload=False), cell_store, reason="every cost unpriced")
    assert done.sources == {"unpriced": len(RUNS)} and not np.array_equal(done.before.overall, done.after.overall)
    for by in ("tool", "model"):
        cells, direct = _cells_and_runs(arena, cell_store, by)
        assert np.array_equal(cells.counts, direct.counts) and np.array_equal(cells.sums, direct.sums)
        for name, means in cells.dimension_means.items():
            assert np.array_equal(means, direct.dimension_means[name], equal_nan=True), name
    assert not np.array_equal(before.sums, _cells_and_runs(arena, cell_store, "tool")[0].sums)


def test_cells_of_float_sums_alone_are_made_anew_with_their_units_when_opened(cell_store: Store) -> None:
    """A database from before the whole-number sums (SQLite schema 5, PostgreSQL 2), its cells'
    float sums drifted by replacements, gets cells made anew from its evaluations when opened."""
    from arena_core import to_dict
    from arena_core.model.records import DIMENSIONS

    arena = Arena(autoload=False)
    arena.process(RUNS, store=cell_store, tasks=TASK_MAP)
    changed = [{**to_dict(r), "total_tokens": r.total_tokens + 7} for r in RUNS[:60]]
    arena.process(changed, store=cell_store, replace=True)
    old_sums = ["runs", "overall", "coverage", *(f"{d}{n}" for d in DIMENSIONS for n in ("", "_n"))]
    old_table = (
        "CREATE TABLE board_cells (grouping TEXT NOT NULL, grp TEXT NOT NULL, task_id TEXT NOT NULL, "
        + ", ".join(f"{n} {'INTEGER' if n == 'runs' or n.endswith('_n') else 'REAL'} NOT NULL" for n in old_sums)
        + ", PRIMARY KEY (grouping, grp, task_id))"
    )
    wrong = f"INSERT INTO board_cells VALUES ('tool', 'nobody', 't', 1, {', '.join(['0.5'] * (len(old_sums) - 1))})"
    if isinstance(cell_store, SQLiteStore):
        with sqlite3.connect(cell_store.path) as connection:
            connection.executescript(f"DROP TABLE board_cells; {old_table}; {wrong}; PRAGMA user_version = 5;")
        reopened: Store = SQLiteStore(cell_store.path)
    else:
        import psycopg

        from arena_core.store.postgres import PostgresStore

        with psycopg.connect(cell_store.url, autocommit=True) as connection:
            for statement in ("DROP TABLE board_cells", old_table, wrong, "UPDATE arena_schema SET version = 2"):
                connection.execute(statement)
        reopened = PostgresStore(cell_store.url)
    for by in ("tool", "model"):
        cells, direct = _cells_and_runs(arena, reopened, by)
        assert "nobody" not in cells.groups and cells.groups == direct.groups
        assert np.array_equal(cells.sums, direct.sums) and np.array_equal(cells.counts, direct.counts)


def test_a_cell_holding_a_figure_of_finer_grain_falls_back_to_its_float_sums(cell_store: Store) -> None:
    """An evaluation stored with a score no whole number of hundredths gives (one a host wrote
    itself) makes its cells inexact: they give their float sums, close to the direct board's,
    and every other cell keeps its exact sum."""
    import attrs

    arena = Arena(autoload=False)
    arena.process(RUNS[:40], store=cell_store, tasks=TASK_MAP)
    before, _ = _cells_and_runs(arena, cell_store, "tool")
    with cell_store.transaction() as tx:
        task = RUNS[0].task_id
        first = tx.evaluations(task)[0]
        tx.put_evaluation(attrs.evolve(first, overall_score=100 / 3, coverage=1e300))
    cells, direct = _cells_and_runs(arena, cell_store, "tool")
    fine = (cells.groups.index(first.tool), cells.tasks.index(task))
    assert cells.sums == pytest.approx(direct.sums, rel=1e-12)
    assert round(cells.sums[fine] * 100) != cells.sums[fine] * 100  # the float sum: thirds are in it
    others = np.ones(cells.sums.shape, dtype=bool)
    others[fine] = False
    assert np.array_equal(cells.sums[others], before.sums[others])
