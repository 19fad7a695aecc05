"""A SQLite store keeps each task's figures between write transactions
(:mod:`arena_core.store.figurecache`): what a batch reads from memory is, after every kind of
write, what the file holds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from arena_core import Arena, ValidationError, to_dict
from arena_core.examples.synthetic import generate_arena
from arena_core.service.tokens import TokenStore
from arena_core.store import SQLiteStore
from arena_core.store import taskfigures, typed as typed_module
from arena_core.store.figurecache import FigureCache, PendingFigures
from arena_core.store.typed import FIGURES


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("postgres_server")())
    return str(tmp_path / "arena.db")


def _open(where: str):
    if where.startswith("postgresql://"):
        from arena_core.store.postgres import PostgresStore

        return PostgresStore(where)
    return SQLiteStore(where)


def _on_file(where: str, task_id: str):
    """The task's figures read from the database (a read transaction keeps nothing)."""
    with _open(where).transaction(write=False) as tx:
        return tx.submission_columns(task_id)


def _scores_on_file(where: str, task_id: str):
    with _open(where).transaction(write=False) as tx:
        return tx.scores(task_id)


def _same_scores(kept, read) -> bool:
    """The same rows, and the same summaries a batch is placed by: the kept ones grown with each
    write (merged, tallied), the read ones worked out from the database's rows."""
    return (
        list(kept.ids) == list(read.ids)
        and list(kept.tools) == list(read.tools)
        and np.array_equal(kept.overall, read.overall)
        and np.array_equal(kept.provisional, read.provisional)
        and np.array_equal(kept.ordered, read.ordered, equal_nan=True)
        and dict(kept.by_tool) == dict(read.by_tool)
    )


def _unsteady(pending: PendingFigures) -> PendingFigures:
    pending.steady = False
    return pending


def _same(kept, read) -> bool:
    return (
        list(kept.ids) == list(read.ids)
        and list(kept.tools) == list(read.tools)
        and list(kept.models) == list(read.models)
        and all(np.array_equal(kept.numeric[f], read.numeric[f], equal_nan=True) for f in FIGURES)
    )


def test_kept_figures_are_the_file_s_after_every_kind_of_write(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    tasks, runs = generate_arena(tasks=4, submissions_per_task=12, seed=2)
    task_map = {t["id"]: t for t in tasks}
    arena = Arena(autoload=False)
    path = where
    store, elsewhere = _open(where), _open(where)  # elsewhere: another writer, with its own cache
    reads: list[str] = []
    real = taskfigures.figure_columns
    monkeypatch.setattr(taskfigures, "figure_columns", lambda t, *a: reads.append(t) or real(t, *a))

    def check() -> list[str]:
        """Every task's figures as a write transaction sees them equal the file's; the tasks it
        had to read from the file."""
        reads.clear()
        with store.transaction() as tx:
            seen = {t: (tx.submission_columns(t), tx.scores(t)) for t in task_map}
            from_file = list(reads)
        for task_id, (kept, scores) in seen.items():
            assert _same(kept, _on_file(path, task_id)), task_id
            assert _same_scores(scores, _scores_on_file(path, task_id)), task_id
        return from_file

    by_task = {t: [r for r in runs if r["task_id"] == t] for t in task_map}
    first = [r for t in task_map for r in by_task[t][:6]]
    arena.process(first, store=store, tasks=task_map)
    assert check() == []  # the batch read each task (none stored yet) and kept it with its runs
    arena.process([by_task[t][6] for t in task_map], store=store)  # new runs: appended
    assert check() == []
    tokens = TokenStore(where if where.startswith("postgresql://") else Path(where))
    token_id = tokens.create("operator")[0]
    assert tokens.charge(token_id, 1_000, 0)  # what every post writes beside the store: not a store write
    assert check() == []
    with store.transaction() as tx:
        with pytest.raises(ValueError, match="read-only"):
            tx.submission_columns(first[0]["task_id"]).numeric["total_tokens"][0] = 1.0
    changed = {**first[0], "total_tokens": 123_456}  # stored again: keeps its place in the file
    arena.process([changed], store=store, replace=True)
    assert check() == [first[0]["task_id"]]  # forgotten by the batch: read from the file again
    assert check() == []  # and kept since
    assert 123_456 in _on_file(path, first[0]["task_id"]).numeric["total_tokens"]
    target = next(t for t in task_map if t != first[1]["task_id"])
    arena.process([{**first[1], "task_id": target}], store=store, replace=True)  # moved to another task
    assert sorted(check()) == sorted({target, first[1]["task_id"]})
    assert first[1]["id"] in _on_file(path, target).ids
    arena.process([by_task[t][7] for t in task_map], store=elsewhere)  # another connection wrote
    assert sorted(check()) == sorted(task_map)  # so everything kept was forgotten
    fresh, stored = by_task[tasks[0]["id"]][8], by_task[tasks[1]["id"]][0]
    with pytest.raises(ValidationError, match="duplicate|stored already"):  # the second task fails: rolled back
        arena.process([fresh, stored], store=store)
    assert check() == [] and fresh["id"] not in _on_file(path, fresh["task_id"]).ids
    arena.process([fresh], store=store)
    assert check() == [] and fresh["id"] in _on_file(path, fresh["task_id"]).ids


def test_a_store_keeps_the_same_scores_with_its_figures_kept_or_read(
    where: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches of one run and of many, re-submissions and tools crossing the provisional minimum
    store the same evaluations and baselines whether each batch reads the task's figures and
    scores from memory and places a few new runs among the scores there, or reads from the
    database and counts through its indexes (a writer that is not the store's only one); and
    the scores kept are the database's after each batch."""
    tasks, runs = generate_arena(tasks=3, submissions_per_task=40, seed=5)
    task_map = {t["id"]: t for t in tasks}
    rare = [{**runs[0], "id": f"rare-{k}", "tool": "rare-tool"} for k in range(3)]  # provisional, then not
    lonely = {**runs[1], "id": "lonely", "tool": "lonely-tool"}  # provisional throughout
    singles = [[r] for r in runs[60:75]]
    batches = [runs[:60], [rare[0]], *singles[:7], [rare[1], lonely], *singles[7:], [rare[2]], runs[75:110],
               [{**runs[3], "total_tokens": 999}], runs[110:]]  # fmt: skip
    assert any(len({r["task_id"] for r in b}) < len(b) for b in batches)  # many runs of a task at once

    def stored(keep: bool, store) -> tuple:
        if not keep:
            monkeypatch.setattr("arena_core.store.figurecache.PendingFigures.get", lambda self, kind, t: None)
            begin = FigureCache.begin
            monkeypatch.setattr(FigureCache, "begin", lambda self, version: _unsteady(begin(self, version)))
        arena = Arena({"min_submissions_per_tool": 3}, autoload=False)
        arena.process([], store=store, tasks=task_map)
        for batch in batches:
            arena.process(batch, store=store, replace=True)
            if keep:
                with store.transaction() as tx:
                    seen = {t: tx.scores(t) for t in task_map}
                for t, scores in seen.items():
                    assert _same_scores(scores, _scores_on_file(where, t)), t
        monkeypatch.undo()
        with store.transaction(write=False) as tx:
            evaluations = {
                e.submission_id: (e.overall_score, e.scores, e.overall_ranking, e.provisional, e.baseline_version)
                for t in task_map
                for e in tx.evaluations(t)
            }
            baselines = {t: {**to_dict(tx.get_baseline(t)), "last_updated": None} for t in task_map}
        return evaluations, baselines

    kept = stored(True, _open(where))
    other = request.getfixturevalue("postgres_server")() if where.startswith("postgresql://") else where + "-read"
    read = stored(False, _open(str(other)))
    assert kept == read
    marks = {i: provisional for i, (_, _, _, provisional, _) in kept[0].items()}
    assert marks["lonely"] and not any(marks[r["id"]] for r in rare)


def test_past_its_rows_the_cache_forgets_the_tasks_kept_longest_ago(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena_core.store import figurecache

    tasks, runs = generate_arena(tasks=4, submissions_per_task=10, seed=3)
    task_ids = [t["id"] for t in tasks]
    store = SQLiteStore(tmp_path / "arena.db")
    Arena(autoload=False).process(runs, store=store, tasks={t["id"]: t for t in tasks})
    monkeypatch.setattr(figurecache, "MAX_ROWS", 25)  # two tasks' figures and a half
    store._figures.tasks.clear()
    store._figures._rows = 0
    for task_id in task_ids:  # each read in a transaction of its own, in this order
        with store.transaction() as tx:
            tx.submission_columns(task_id)
    assert [task for _, task in store._figures.tasks] == task_ids[2:] and store._figures._rows == 20
    with store.transaction() as tx:
        for task_id in task_ids:
            assert _same(tx.submission_columns(task_id), _on_file(str(tmp_path / "arena.db"), task_id))


def test_a_file_whose_count_of_writes_was_deleted_keeps_nothing_and_still_stores(tmp_path: Path) -> None:
    import sqlite3

    tasks, runs = generate_arena(tasks=2, submissions_per_task=6, seed=4)
    store = SQLiteStore(tmp_path / "arena.db")
    arena = Arena(autoload=False)
    arena.process(runs[:6], store=store, tasks={t["id"]: t for t in tasks})
    with sqlite3.connect(tmp_path / "arena.db") as connection:
        connection.execute("DELETE FROM arena_writes")
    arena.process(runs[6:], store=store)  # no count to read: the figures are read from the file
    with store.transaction() as tx:
        assert sorted(len(tx.submission_columns(t["id"]).ids) for t in tasks) == [6, 6]


def test_names_grow_in_place_and_no_earlier_sequence_changes() -> None:
    """A kept task's names grow by appending to one list (``Grown.plus``): every sequence over it
    keeps its own items, also when a shorter one grows again (a write rolled back, then another
    made from the state before it), which then copies; a batch reads the stored names and its
    own joined in place (``Joined``), as a list of both reads."""
    from arena_core.engine.sequences import Grown, Joined

    first = Grown(["a", "b"])
    longer = first.plus(["c"])
    assert longer._items is first._items  # appended in place, not copied
    other = first.plus(["x", "y"])  # from the shorter state: the longer one keeps "c"
    assert other._items is not first._items
    assert list(first) == ["a", "b"] and list(longer) == ["a", "b", "c"] and list(other) == ["a", "b", "x", "y"]
    assert longer.plus(["d"])._items is longer._items
    assert list(longer) == ["a", "b", "c"] and len(longer) == 3 and longer[-1] == "c" and longer[1:] == ["b", "c"]
    with pytest.raises(IndexError):
        longer[3]  # beyond its length, though the list holds "d"
    joined = Joined(longer, ["e", "f"])
    assert joined == ["a", "b", "c", "e", "f"] and joined[3] == "e" and joined[-1] == "f" and joined[2:4] == ["c", "e"]
    assert len(joined) == 5 and longer == ("a", "b", "c") and longer != ["a", "b"]
    parts = [longer, [], ["e"], Grown([]), ("f", "g"), ["h"]]  # a group's tasks, some of them empty
    many, flat = Joined(*parts), ["a", "b", "c", "e", "f", "g", "h"]
    assert len(many) == len(flat) and list(many) == flat and [many[i] for i in range(-7, 7)] == flat + flat
    assert many[2:5] == flat[2:5] and Joined() == [] and len(Joined([], [])) == 0
    with pytest.raises(IndexError):
        many[7]


def test_the_only_writer_places_a_new_run_among_kept_scores_and_a_shared_one_counts(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store object that has been the only writer since its last transaction reads a task's
    scores once, with its figures, and places each later run among them in memory: no statement
    reads the task's scores or counts them. Once another writer wrote, the next post counts
    through the indexes instead of reading scores it would forget, as does the only writer
    whose cache has no room left for them; all rank as the file does."""
    tasks, runs = generate_arena(tasks=2, submissions_per_task=30, seed=7)
    task_map = {t["id"]: t for t in tasks}
    arena = Arena(autoload=False)
    store, elsewhere = _open(where), _open(where)
    arena.process(runs[:40], store=elsewhere, tasks=task_map)
    statements: list[str] = []
    real = typed_module.TypedRows._run
    monkeypatch.setattr(typed_module.TypedRows, "_run", lambda self, sql, *a: statements.append(sql) or real(self, sql, *a))

    def post(run: dict, into=store) -> tuple[list[str], int]:
        statements.clear()
        (evaluation,) = arena.process([run], store=into).evaluations
        with _open(where).transaction(write=False) as tx:
            (on_file,) = [e for e in tx.evaluations(run["task_id"]) if e.submission_id == run["id"]]
        assert (evaluation.overall_ranking, evaluation.percentile) == (on_file.overall_ranking, on_file.percentile)
        counted = sum("overall_score > " in sql for sql in statements)  # a new run's standing, counted
        return [sql for sql in statements if sql == typed_module.SCORES_OF_TASK], counted

    first, second, third, fourth = [r for r in runs[40:] if r["task_id"] == runs[40]["task_id"]][:4]
    assert post(first) == ([], 1)  # its cache started over (another writer wrote): counted
    assert post(second) == ([typed_module.SCORES_OF_TASK], 0)  # the only writer since: scores read to keep
    assert post(third) == ([], 0)  # and placed among in memory since
    arena.process([r for r in runs[40:] if r["task_id"] != first["task_id"]][:1], store=elsewhere)
    assert post(fourth) == ([], 1)
    fifth = [r for r in runs[40:] if r["task_id"] == first["task_id"]][4]
    monkeypatch.setattr("arena_core.store.figurecache.MAX_ROWS", 20)  # fewer rows free than the task has runs
    assert post(fifth) == ([], 1)  # the only writer since, but the task's scores would not fit: counted


def test_a_batch_looks_its_ids_up_once_and_a_transaction_knows_what_it_wrote(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of several tasks asks the database where its run ids are stored once, not again
    for each task as it writes that task's runs; an id the transaction has written since it
    looked it up is asked again, so a run moved to another task on purpose is found under its
    new task."""
    tasks, runs = generate_arena(tasks=3, submissions_per_task=4, seed=3)
    arena, store = Arena(autoload=False), _open(where)
    arena.process(runs[:6], store=store, tasks={t["id"]: t for t in tasks})
    statements: list[str] = []
    real = typed_module.TypedRows._run
    monkeypatch.setattr(typed_module.TypedRows, "_run", lambda self, sql, *a: statements.append(sql) or real(self, sql, *a))
    arena.process(runs[6:], store=store)
    assert len({r["task_id"] for r in runs[6:]}) > 1
    assert sum("SELECT id, task_id FROM submissions" in sql for sql in statements) == 1
    moved = {**runs[0], "task_id": next(t["id"] for t in tasks if t["id"] != runs[0]["task_id"])}
    with store.transaction() as tx:
        assert tx.tasks_of([runs[0]["id"], "never-stored"]) == {runs[0]["id"]: runs[0]["task_id"]}
        tx.put_submissions([arena.structure_submission(moved), arena.structure_submission({**runs[1], "id": "new"})])
        statements.clear()
        assert tx.tasks_of(["never-stored"]) == {} and statements == []  # known from its own look-up
        assert tx.tasks_of([runs[0]["id"], "new", "never-stored"]) == {runs[0]["id"]: moved["task_id"], "new": runs[1]["task_id"]}
        assert len(statements) == 1  # the two it wrote, asked again
    with store.transaction(write=False) as tx:
        assert tx.tasks_of([runs[0]["id"], "new", "never-stored"]) == {runs[0]["id"]: moved["task_id"], "new": runs[1]["task_id"]}


def test_the_names_a_store_keeps_add_no_work_to_a_full_garbage_collection(tmp_path: Path) -> None:
    """A store keeps each task's names (ids, tools, models, ...) between batches. Held in Python
    lists, every full collection of the cyclic garbage collector visited each of them: at
    1,000,000 kept runs a tenth of a second, once a batch. They are held where the collector
    does not look, so what it visits grows with the objects a store keeps, not with its runs."""
    import gc

    def visited() -> int:
        """The references a full collection follows, from every object it tracks."""
        return sum(len(gc.get_referents(o)) for o in gc.get_objects())

    tasks = {f"t{k}": {"id": f"t{k}", "category": "debugging"} for k in range(4)}
    runs = [
        {"id": f"r{i}", "task_id": f"t{i % 4}", "tool": f"tool-{i % 3}", "model": "m", "total_tokens": 1000 + i,
         "tool_calls": 3, "execution_time": 10.0 + i % 7, "estimated_cost": 0.1, "success": i % 2 == 0}
        for i in range(12_000)
    ]  # fmt: skip
    store, arena = SQLiteStore(tmp_path / "arena.db"), Arena(autoload=False)
    arena.process(runs[:40], store=store, tasks=tasks)
    gc.collect()
    before = visited()
    arena.process(runs[40:], store=store)
    del runs
    gc.collect()
    with store.transaction() as tx:  # the names are kept: read from memory, not the file
        kept = tx.submission_columns("t0")
    assert len(kept.ids) == 3_000 and kept.ids[-1] == "r11996" and list(kept.tools)[:3] == ["tool-0", "tool-1", "tool-2"]
    grown = visited() - before
    assert grown < 1_000, grown  # the runs' 12,000 ids alone were 12,000 references, 70,000 in all


def test_a_kept_task_s_figures_stay_sorted_through_every_kind_of_write_and_its_baselines_are_the_spec_s(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch reads a task of many runs in the order its store keeps, merging its own runs in
    (engine/grouporder.py); the store keeps that order with the task's figures, merged with each
    batch's runs, so a later batch sorts nothing of the task's history again. After every kind
    of write the kept order is a sort of the file's figures, and each stored baseline is the
    spec's ``compute_baseline`` of all the task's runs (holes, zero times and costs included)."""
    import random

    from arena_core import Submission, structure
    from arena_core.engine.baselines import compute_baseline
    from arena_core.engine.columns import Columns

    rng = random.Random(7)
    task_ids = ["alpha", "beta", "gamma"]

    def runs(prefix: str, count: int, task_id: str | None = None) -> list[dict]:
        made = []
        for i in range(count):
            run = {"id": f"{prefix}-{i}", "task_id": task_id or task_ids[i % 3], "tool": f"tool-{i % 4}", "success": True}
            for field, value in (
                ("total_tokens", rng.randrange(0, 30) * 1000), ("tool_calls", rng.randrange(0, 20)),
                ("iterations", rng.randrange(1, 6)), ("execution_time", rng.choice([0.0, 12.5, 60.0, rng.uniform(1, 900)])),
                ("estimated_cost", rng.choice([0.0, 0.25, rng.uniform(0.01, 2)])),
            ):  # fmt: skip
                if rng.random() > 0.2:  # a fifth of the figures absent
                    run[field] = value
            made.append(run)
        return made

    sorted_anew: list[str] = []
    real = Columns.order
    monkeypatch.setattr(Columns, "order", lambda self, f: (f in self.orders or sorted_anew.append(f), real(self, f))[1])
    arena = Arena({"missing": {"total_tokens": "reweight", "tool_calls": "reweight"}}, autoload=False)
    store, everything = _open(where), {}

    def process(batch: list[dict], **options) -> None:
        arena.process(batch, store=store, **options)
        everything.update({r["id"]: r for r in batch})
        with store.transaction() as tx:
            seen = {t: (tx.submission_columns(t), to_dict(tx.get_baseline(t))) for t in task_ids}
        for task_id, (kept, stored) in seen.items():
            on_file = _on_file(where, task_id)
            assert _same(kept, on_file)
            for field, order in kept.orders.items():
                np.testing.assert_array_equal(order.values(), np.sort(on_file.numeric[field]))
            if task_id not in {r["task_id"] for r in batch}:  # a task a run moved from keeps its baseline
                continue
            mine = [structure(r, Submission) for r in everything.values() if r["task_id"] == task_id]
            expected = to_dict(compute_baseline(task_id, mine))
            assert {k: v for k, v in stored.items() if k not in ("last_updated", "version")} == {
                k: v for k, v in expected.items() if k not in ("last_updated", "version")
            }

    process(runs("first", 150), tasks={t: {"id": t} for t in task_ids})  # 50 runs a task
    process(runs("second", 30))
    with store.transaction() as tx:  # the order the batches read is kept with the figures
        assert all(sorted(tx.submission_columns(t).orders) == sorted(FIGURES) for t in task_ids)
    sorted_anew.clear()
    process(runs("third", 30))
    assert sorted_anew == []  # no task's history sorted again
    changed = [{**r, "total_tokens": 999_000} for r in runs("second", 6)]  # stored again: read anew
    process(changed, replace=True)
    process([{**runs("third", 1)[0], "task_id": "beta"}], replace=True)  # moved to another task
    process(runs("fourth", 30))  # the tasks those made unknown are read and sorted once more
    sorted_anew.clear()
    process(runs("fifth", 30))
    assert sorted_anew == []


def test_kept_figures_grow_in_place_and_no_earlier_array_changes() -> None:
    """A kept task's figures are the start of a longer array: a batch's runs are written after
    them, not the task's history copied, and a state grown from a shorter one (a write rolled
    back, then another) copies, so every array handed out keeps its values."""
    from arena_core.store.figurecache import figure_columns, grown_columns

    def rows(start: int, count: int) -> list[tuple]:
        return [(f"r{i}", "tool", "model", 1000.0 + i, float(i % 7), None, 1.5 * i, 0.01 * i) for i in range(start, start + count)]

    def expected(*spans: tuple[int, int]) -> np.ndarray:
        return np.array([1000.0 + i for start, count in spans for i in range(start, start + count)])

    first = figure_columns("t", rows(0, 100), FIGURES)
    second = grown_columns(first, figure_columns("t", rows(100, 10), FIGURES), FIGURES)
    third = grown_columns(second, figure_columns("t", rows(110, 10), FIGURES), FIGURES)
    tokens = [c.numeric["total_tokens"] for c in (first, second, third)]
    assert np.shares_memory(tokens[1], tokens[2])  # written after the second's, in its room
    other = grown_columns(second, figure_columns("t", rows(500, 5), FIGURES), FIGURES)  # from the shorter state
    assert not np.shares_memory(other.numeric["total_tokens"], tokens[2])
    assert tokens[0].tolist() == expected((0, 100)).tolist() and tokens[1].tolist() == expected((0, 110)).tolist()
    assert tokens[2].tolist() == expected((0, 120)).tolist()
    assert other.numeric["total_tokens"].tolist() == expected((0, 110), (500, 5)).tolist()
    np.testing.assert_array_equal(third.numeric["iterations"], np.full(120, np.nan))
    assert third.numeric["execution_time"].tolist() == [1.5 * i for i in range(120)]
    many = third
    for start in range(120, 400, 40):  # past its room: copied into a larger one, values kept
        many = grown_columns(many, figure_columns("t", rows(start, 40), FIGURES), FIGURES)
    assert many.numeric["total_tokens"].tolist() == expected((0, 400)).tolist()
    assert tokens[2].tolist() == expected((0, 120)).tolist() and list(many.ids) == [f"r{i}" for i in range(400)]
    with pytest.raises(ValueError, match="read-only"):
        many.numeric["tool_calls"][0] = 1.0
