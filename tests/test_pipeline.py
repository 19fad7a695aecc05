"""The evaluation pipeline over the memory and SQLite stores."""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import attrs
import pytest

from arena_core.stats.runs import gather_runs
from arena_core.stats.tasktable import TaskTable

from arena_core import Arena, PluginError, ValidationError, hookimpl, to_dict
from arena_core.engine.ranking import competition_ranks
from arena_core.examples.synthetic import generate_arena
from arena_core.registry.manager import get_plugin_manager
from arena_core.store import MemoryStore, SQLiteStore, Store

TASKS, SUBS = generate_arena(tasks=4, submissions_per_task=12, outliers=2, seed=5)
TASK_MAP = {t["id"]: t for t in TASKS}


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "postgresql":
        from arena_core.store.postgres import PostgresStore

        return PostgresStore(request.getfixturevalue("postgres_server")())
    return MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "arena.db")


def snapshot(store: Store) -> dict:
    with store.transaction(write=False) as tx:
        return {
            t: (to_dict(tx.get_task(t)), [to_dict(s) for s in tx.submissions(t)],
                [to_dict(e) for e in tx.evaluations(t)], to_dict(tx.get_baseline(t)))
            for t in TASK_MAP
        }


def run(arena: Arena, subs: list, store: Store, tasks: dict | None = TASK_MAP, *, replace: bool = False):
    return asyncio.run(arena.process_batch(subs, store=store, tasks=tasks, replace=replace))


def test_one_batch_on_an_empty_store_equals_evaluate_many(arena: Arena, store: Store) -> None:
    result = run(arena, SUBS, store)
    expected = arena.evaluate_many(SUBS, TASK_MAP)

    def strip(ev):
        return {k: v for k, v in to_dict(ev).items() if k not in ("evaluated_at", "baseline_version")}

    assert [strip(e) for e in result.evaluations] == [strip(e) for e in expected]
    assert {e.baseline_version for e in result.evaluations} == {1}  # scored against the first baselines stored
    assert {o.submission_id for o in result.outliers} == {s["id"] for s in SUBS if s.get("meta", {}).get("planted_outlier")}
    assert set(result.baselines) == set(TASK_MAP)


def test_the_batch_path_and_the_per_record_path_store_the_same(
    arena: Arena, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batched, per_record = MemoryStore(), MemoryStore()
    run(arena, SUBS[::2], batched)
    run(arena, SUBS[1::2], batched)
    monkeypatch.setattr("arena_core.store.taskgroups.evaluate_columns", lambda *args, **kwargs: None)
    run(arena, SUBS[::2], per_record)
    run(arena, SUBS[1::2], per_record)

    def without_times(snap: dict) -> dict:
        return {t: (task, subs, [{k: v for k, v in e.items() if k != "evaluated_at"} for e in evs],
                    {k: v for k, v in baseline.items() if k != "last_updated"})
                for t, (task, subs, evs, baseline) in snap.items()}

    assert without_times(snapshot(batched)) == without_times(snapshot(per_record))


def test_later_batches_are_ranked_among_everything_stored(arena: Arena, store: Store) -> None:
    run(arena, SUBS[::2], store)
    run(arena, SUBS[1::2], store)
    with store.transaction(write=False) as tx:
        for task_id in TASK_MAP:
            evaluations = tx.evaluations(task_id)
            assert len(evaluations) == 12
            best_first = sorted(evaluations, key=lambda e: e.overall_ranking)
            assert [e.overall_ranking for e in best_first] == competition_ranks([e.overall_score for e in best_first])
            assert tx.get_baseline(task_id).submission_count == 12


def test_resubmission_replaces_instead_of_duplicating(arena: Arena, store: Store) -> None:
    run(arena, SUBS, store)
    before = snapshot(store)
    with pytest.raises(ValidationError, match=r"an id not yet stored for task .*replace=True"):
        run(arena, SUBS[:5], store)
    assert snapshot(store) == before  # refused whole: nothing written
    run(arena, SUBS[:5], store, replace=True)
    after = snapshot(store)
    for task_id in TASK_MAP:
        assert len(after[task_id][1]) == len(before[task_id][1]) and len(after[task_id][2]) == len(before[task_id][2])
    changed = {**SUBS[0], "total_tokens": SUBS[0]["total_tokens"] * 3}
    run(arena, [changed], store, replace=True)
    with store.transaction(write=False) as tx:
        stored = [s for s in tx.submissions(changed["task_id"]) if s.id == changed["id"]]
        assert len(stored) == 1 and stored[0].total_tokens == changed["total_tokens"]


def test_every_given_task_is_stored_and_process_is_the_synchronous_pipeline(arena: Arena, store: Store) -> None:
    """Tasks given with a batch are stored whether or not the batch has submissions for them, so
    a later batch for another task needs no tasks."""
    first_task = SUBS[0]["task_id"]
    result = arena.process([s for s in SUBS if s["task_id"] == first_task], store=store, tasks=TASK_MAP)
    assert {e.task_id for e in result.evaluations} == {first_task}
    with store.transaction(write=False) as tx:
        assert sorted(tx.task_ids()) == sorted(TASK_MAP)
    later = [s for s in SUBS if s["task_id"] != first_task]
    assert len(arena.process(later, store=store).evaluations) == len(later)


def test_duplicate_ids_in_one_batch_and_unknown_tasks_are_refused(arena: Arena, store: Store) -> None:
    with pytest.raises(ValidationError, match="an id unique within the batch"):
        run(arena, [SUBS[0], SUBS[0]], store)
    with pytest.raises(ValidationError, match="a task known to the store"):
        run(arena, SUBS[:3], store, tasks=None)


class _FailOn:
    """A metric that raises on one submission: a failure halfway through scoring."""

    name = "speed_or_fail"
    requires = ()

    def __init__(self, victim: str) -> None:
        self.victim = victim

    def score(self, submission, task, baseline):
        if submission.id == self.victim:
            raise RuntimeError("injected failure")
        return 50.0


def test_failure_halfway_through_scoring_leaves_the_store_as_it_was(arena: Arena, store: Store) -> None:
    run(arena, SUBS[:20], store)
    before = snapshot(store)

    class Plugin:
        @hookimpl
        def arena_register_metrics(self):
            return [_FailOn(SUBS[40]["id"])]

    pm = get_plugin_manager(autoload=False)
    pm.register(Plugin(), name="failing")
    failing = Arena({"metrics": {"speed": "speed_or_fail"}}, plugin_manager=pm)
    with pytest.raises(PluginError, match="injected failure"):
        run(failing, SUBS[20:], store)
    assert snapshot(store) == before


class _BreaksAfter:
    """Wraps a store; its transaction raises after ``n`` records written, as a full disk would
    (a write of many, ``put_submissions``, counts each of its records)."""

    def __init__(self, inner: Store, n: int) -> None:
        self.inner, self.n = inner, n

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[object]:
        outer = self

        class Tx:
            def __init__(self, tx):
                self._tx, self.writes = tx, 0

            def __getattr__(self, name):
                attr = getattr(self._tx, name)
                if not name.startswith("put_"):
                    return attr

                def put(*args):
                    self.writes += len(args[0]) if name.endswith("s") else 1
                    if self.writes > outer.n:
                        raise OSError("disk full")
                    return attr(*args)

                return put

        with self.inner.transaction(write=write) as tx:
            yield Tx(tx)


def test_failure_halfway_through_writing_leaves_no_partial_rows(arena: Arena, store: Store) -> None:
    run(arena, SUBS[:10], store)
    before = snapshot(store)
    with pytest.raises(OSError, match="disk full"):
        run(arena, SUBS[10:], _BreaksAfter(store, 25))
    assert snapshot(store) == before


def test_notifications_follow_the_commit_and_only_it(store: Store) -> None:
    seen: list = []

    class Listener:
        @hookimpl
        def arena_evaluation_completed(self, evaluation):
            with store.transaction(write=False) as tx:  # already committed when we hear of it
                seen.append(("evaluation", evaluation.submission_id, len(tx.evaluations(evaluation.task_id))))

        @hookimpl
        def arena_batch_completed(self, result):
            seen.append(("batch", len(result.evaluations)))

    pm = get_plugin_manager(autoload=False)
    pm.register(Listener(), name="listener")
    arena = Arena(plugin_manager=pm)
    run(arena, SUBS[:12], store)
    assert seen[-1] == ("batch", 12)
    assert [s[1] for s in seen[:-1]] == [s["id"] for s in SUBS[:12]]
    assert all(count == 12 for _, _, count in seen[:-1])
    seen.clear()
    with pytest.raises(ValidationError):
        run(arena, [SUBS[0], SUBS[0]], store)
    assert seen == []


def test_the_spec_flow_scores_against_the_stored_baseline(arena: Arena, store: Store) -> None:
    run(arena, SUBS[:12], store)  # task 0's 12 submissions define its baseline
    task_id = SUBS[0]["task_id"]
    with store.transaction(write=False) as tx:
        stored = tx.get_baseline(task_id)
    newcomer = {**SUBS[0], "id": "late", "total_tokens": int(stored.max_tokens * 2)}
    result = run(arena, [newcomer], store)
    assert result.evaluations[0].metric_scores["token_efficiency"] == 0.0  # judged by the stored baseline
    assert result.baselines[task_id].max_tokens == newcomer["total_tokens"]  # then the baseline moves
    assert result.baselines[task_id].submission_count == 13


def _write_batch(path: str, ids: list[int]) -> None:
    arena = Arena(autoload=False)
    store = SQLiteStore(path)
    for chunk in range(0, len(ids), 4):
        asyncio.run(arena.process_batch([SUBS[i] for i in ids[chunk:chunk + 4]], store=store, tasks=TASK_MAP))


def test_two_processes_writing_one_file_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    SQLiteStore(path)
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_batch, args=(path, list(range(start, len(SUBS), 2)))) for start in (0, 1)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == len(SUBS)
        assert connection.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0] == len(SUBS)
    store = SQLiteStore(path)
    with store.transaction(write=False) as tx:
        for task_id in TASK_MAP:
            ranks = sorted(e.overall_ranking for e in tx.evaluations(task_id))
            scores = sorted((e.overall_score for e in tx.evaluations(task_id)), reverse=True)
            assert ranks == competition_ranks(scores)


def test_a_file_that_is_not_a_database_is_reported(tmp_path: Path) -> None:
    from arena_core import ArenaError

    bogus = tmp_path / "not.db"
    bogus.write_text("this is not sqlite " * 100)
    with pytest.raises(ArenaError, match="not a usable arena database"):
        SQLiteStore(bogus)


def test_one_store_and_one_arena_shared_by_four_threads_lose_nothing(arena: Arena, store: Store) -> None:
    """docs/store.md: both built-in stores may be shared between threads (as may an Arena);
    concurrent one-run batches take turns, so each is ranked among everything stored before it
    and the end state equals one batch of all of them."""
    import threading

    arena.process([], store=store, tasks=TASK_MAP)
    errors: list[BaseException] = []

    def post(share: list) -> None:
        try:
            for sub in share:
                arena.process([sub], store=store)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=post, args=(SUBS[k::4],)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with store.transaction(write=False) as tx:
        stored = {t: tx.evaluations(t) for t in TASK_MAP}
    assert sorted(e.submission_id for evs in stored.values() for e in evs) == sorted(s["id"] for s in SUBS)
    for evaluations in stored.values():
        best_first = sorted(evaluations, key=lambda e: -e.overall_score)
        assert [e.overall_ranking for e in best_first] == competition_ranks([e.overall_score for e in best_first])


def _strip_times(snap: dict) -> dict:
    return {t: (task, subs, [{k: v for k, v in e.items() if k != "evaluated_at"} for e in evs],
                {k: v for k, v in baseline.items() if k != "last_updated"})
            for t, (task, subs, evs, baseline) in snap.items()}


@pytest.fixture(params=["sqlite", "postgresql"])
def typed_store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    """A store of typed columns beside its records, ranking on read (store/typed.py)."""
    if request.param == "postgresql":
        from arena_core.store.postgres import PostgresStore

        return PostgresStore(request.getfixturevalue("postgres_server")())
    return SQLiteStore(tmp_path / "arena.db")


@pytest.mark.parametrize("counted", [16, 0], ids=["counted", "read whole"])
def test_typed_stores_rank_on_read_what_a_store_of_objects_rewrites(
    arena: Arena, typed_store: Store, counted: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SQLite and PostgreSQL stores keep scores in columns and derive ranks and percentiles
    when read; a few new runs of a task are ranked by counting the stored scores above and below
    them through an index, more by reading the task's scores. The memory store (nine methods
    only) has its stored evaluations re-ranked and written back. After batches that move every
    earlier rank, single runs, runs tying stored ones, re-submissions, a tool crossing the
    provisional minimum and a change of minimum, both hold the same arena."""
    from arena_core.store import standings
    from arena_core.store.typed import TypedRows

    monkeypatch.setattr(standings, "COUNTED", counted)
    calls: list[int] = []
    real = TypedRows.standing
    monkeypatch.setattr(TypedRows, "standing", lambda self, *args: calls.append(1) or real(self, *args))
    objects = MemoryStore()
    order = SUBS[5:] + SUBS[:5]
    ties = [{**s, "id": f"{s['id']}-again"} for s in SUBS[:3]]  # the same figures: the same scores
    stricter = Arena({"min_submissions_per_tool": 4}, autoload=False)
    batches = [(arena, order[:7]), (arena, order[7:20]), (arena, order[20:40]), (arena, ties[:1]),
               (arena, ties[1:]), (stricter, order[40:41]), (stricter, order[41:]), (arena, [{**SUBS[6], "total_tokens": 1}])]  # fmt: skip
    returned: dict[int, list] = {}
    for store in (objects, typed_store):
        for number, (scoring, batch) in enumerate(batches):
            result = run(scoring, batch, store, replace=number == len(batches) - 1)
            returned.setdefault(number, []).append(
                [{k: v for k, v in to_dict(e).items() if k != "evaluated_at"} for e in result.evaluations])
    assert _strip_times(snapshot(typed_store)) == _strip_times(snapshot(objects))  # as read: ranked on read
    assert all(objects_got == typed_got for objects_got, typed_got in returned.values())  # as the batch ranked them
    assert bool(calls) == bool(counted)  # the path named ran
    with typed_store.transaction(write=False) as tx:
        marks = {(e.tool, e.provisional) for t in TASK_MAP for e in tx.evaluations(t)}
        scores = [e.overall_score for t in TASK_MAP for e in tx.evaluations(t)]
    assert {mark for _, mark in marks} == {True, False}  # both kinds of mark are exercised
    assert len(scores) > len(set(scores))  # and ties


def test_a_batch_reads_columns_not_stored_records(arena: Arena, typed_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch into the SQLite or PostgreSQL store parses no stored submission or evaluation: its
    cost is the batch plus a few numbers per stored row of its tasks, not a rebuild of the history."""
    from arena_core.store.typed import TypedRows

    store = typed_store
    run(arena, SUBS[:30], store)

    def refuse(*args: object) -> None:
        raise AssertionError("a stored record was parsed")

    monkeypatch.setattr(TypedRows, "submissions", refuse)
    monkeypatch.setattr(TypedRows, "evaluations", refuse)
    result = run(arena, SUBS[30:], store)
    assert len(result.evaluations) == len(SUBS) - 30
    monkeypatch.undo()
    with store.transaction(write=False) as tx:
        stored = {e.submission_id: e for t in TASK_MAP for e in tx.evaluations(t)}
    assert all(stored[e.submission_id] == e for e in result.evaluations)  # as returned, so as stored



def test_a_batch_reads_its_tasks_and_baselines_and_writes_baselines_a_batch_at_a_time(
    arena: Arena, typed_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch over several tasks reads their records in one statement (and once more before its
    write transaction, for the checks that run ahead), their stored baselines in one, and writes
    the next versions in one statement run per table: not a statement per task and record. What
    it stores is what the record-by-record methods stored (the memory store's equality with
    these stores is the test above)."""
    from arena_core.store.typed import TypedRows

    run(arena, SUBS[:20], typed_store)
    with typed_store.transaction(write=False) as tx:
        kind = type(tx)

    def refuse(*args: object) -> None:
        raise AssertionError("read or written record by record")

    for name in ("get_task", "get_baseline", "put_baseline"):
        monkeypatch.setattr(kind, name, refuse)
    statements: list[str] = []
    real_run, real_many = TypedRows._run, TypedRows._many
    monkeypatch.setattr(TypedRows, "_run", lambda self, sql, *a: statements.append(sql) or real_run(self, sql, *a))
    monkeypatch.setattr(TypedRows, "_many", lambda self, sql, rows: statements.append(sql) or real_many(self, sql, rows))
    result = run(arena, SUBS[20:], typed_store, tasks=None)
    touched = {s["task_id"] for s in SUBS[20:]}
    assert len(touched) == 3
    assert sum("FROM tasks" in sql for sql in statements) == 2
    assert sum("FROM baselines" in sql for sql in statements) == 1
    assert sum("INTO baselines " in sql for sql in statements) == sum("INTO baseline_versions " in sql for sql in statements) == 1
    monkeypatch.undo()
    with typed_store.transaction(write=False) as tx:
        assert {t: tx.get_baseline(t) for t in touched} == dict(result.baselines)
        earlier = {s["task_id"] for s in SUBS[:20]}
        assert {t: b.version for t, b in result.baselines.items()} == {t: 1 + (t in earlier) for t in touched}
        assert all(tx.get_baseline_version(t, b.version) == b for t, b in result.baselines.items())
    from arena_core.store import pipeline

    monkeypatch.setattr(pipeline, "TASKS_AT_ONCE", 2)  # a stretch of two tasks, then one
    for name in ("get_task", "get_baseline", "put_baseline"):
        monkeypatch.setattr(kind, name, refuse)
    monkeypatch.setattr(TypedRows, "_run", lambda self, sql, *a: statements.append(sql) or real_run(self, sql, *a))
    monkeypatch.setattr(TypedRows, "_many", lambda self, sql, rows: statements.append(sql) or real_many(self, sql, rows))
    statements.clear()
    again = run(arena, [{**s, "id": f"{s['id']}-again"} for s in SUBS[20:]], typed_store, tasks=None)
    assert sum("FROM tasks" in sql for sql in statements) == 1 + 2
    assert sum("FROM baselines" in sql for sql in statements) == 2
    assert sum("INTO baselines " in sql for sql in statements) == 2
    assert {t: b.version for t, b in again.baselines.items()} == {t: b.version + 1 for t, b in result.baselines.items()}
    monkeypatch.undo()
    some = next(iter(result.baselines.values()))
    with typed_store.transaction() as tx:  # a baseline without its version is stored as the key's next
        tx.put_baselines([("elsewhere", some), ("elsewhere", attrs.evolve(some, version=None))])  # type: ignore[attr-defined]
        assert tx.get_baseline("elsewhere").version == some.version + 1

def test_a_page_of_rankings_is_read_best_first(arena: Arena, typed_store: Store) -> None:
    run(arena, SUBS, typed_store)
    task_id = SUBS[0]["task_id"]
    with typed_store.transaction(write=False) as tx:
        everything = sorted(tx.evaluations(task_id), key=lambda e: (e.overall_ranking, e.submission_id))
        page = tx.ranked(task_id, offset=2, limit=5)
        rest = tx.ranked(task_id, offset=2)
    assert [e.overall_score for e in page] == [e.overall_score for e in everything[2:7]]
    assert [e.overall_ranking for e in page] == [e.overall_ranking for e in everything[2:7]]
    assert [e.overall_score for e in rest] == [e.overall_score for e in everything[2:]] and len(rest) > 5


_VERSION_1 = """
CREATE TABLE tasks (id TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE baselines (key TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE submissions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, task_id TEXT, data TEXT NOT NULL);
CREATE INDEX submissions_task ON submissions (task_id);
CREATE TABLE evaluations (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, submission_id TEXT NOT NULL UNIQUE, task_id TEXT NOT NULL,
    data TEXT NOT NULL);
CREATE INDEX evaluations_task ON evaluations (task_id);
"""


def test_a_version_1_database_is_migrated_when_opened(arena: Arena, tmp_path: Path) -> None:
    """A file written before scores had columns (every record as JSON alone, ranks inside) is
    given the columns, filled from its records, and then works as one written today."""
    import json

    reference = MemoryStore()
    run(arena, SUBS[:24], reference)
    old = tmp_path / "old.db"
    with sqlite3.connect(old) as connection, reference.transaction(write=False) as tx:
        connection.executescript(_VERSION_1)
        for task_id in TASK_MAP:
            connection.execute("INSERT INTO tasks VALUES (?, ?)", (task_id, json.dumps(to_dict(tx.get_task(task_id)))))
            if tx.get_baseline(task_id) is not None:
                connection.execute("INSERT INTO baselines VALUES (?, ?)",
                                   (task_id, json.dumps(to_dict(tx.get_baseline(task_id)))))
            for s in tx.submissions(task_id):
                connection.execute("INSERT INTO submissions (id, task_id, data) VALUES (?, ?, ?)",
                                   (s.id, s.task_id, json.dumps(to_dict(s))))
            for e in tx.evaluations(task_id):
                connection.execute("INSERT INTO evaluations (submission_id, task_id, data) VALUES (?, ?, ?)",
                                   (e.submission_id, e.task_id, json.dumps(to_dict(e))))
    migrated = SQLiteStore(old)
    with sqlite3.connect(old) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 9
    assert snapshot(migrated) == snapshot(reference)
    with migrated.transaction(write=False) as tx:  # the leaderboard's cells, filled from the records
        stored = [e for t in tx.task_ids() for e in tx.evaluations(t)]
        assert TaskTable.of(gather_runs(arena.scorer, stored, "tool")).groups == sorted(
            {str(row[0]) for row in tx.board_cells("tool")})
    run(arena, SUBS[24:], reference)
    run(arena, SUBS[24:], migrated)
    assert _strip_times(snapshot(migrated)) == _strip_times(snapshot(reference))


def test_a_version_6_file_gets_the_indexes_and_nothing_else_is_rebuilt(arena: Arena, tmp_path: Path) -> None:
    from arena_core.store.typed import FIGURES_OF_TASK, SCORES_OF_TASK

    path = tmp_path / "arena.db"
    run(arena, SUBS, SQLiteStore(path))
    with sqlite3.connect(path) as connection:  # as version 6 left it, with a mark its rebuild would drop
        connection.execute("DROP INDEX evaluations_tool")
        connection.execute("DROP INDEX submissions_figures")
        connection.execute("DROP INDEX evaluations_scores")
        connection.execute("CREATE INDEX evaluations_task ON evaluations (task_id)")
        connection.execute("CREATE TEMP TABLE one AS SELECT * FROM board_cells LIMIT 1")
        connection.execute("UPDATE one SET grouping = 'mark'")
        connection.execute("INSERT INTO board_cells SELECT * FROM one")
        connection.execute("PRAGMA user_version = 6")
    store = SQLiteStore(path)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 9
        indexes = {row[1] for table in ("evaluations", "submissions")
                   for row in connection.execute(f"PRAGMA index_list({table})")}  # fmt: skip
        assert {"evaluations_tool", "submissions_figures", "evaluations_scores"} <= indexes
        assert "evaluations_task" not in indexes  # the scores' index serves its look-ups
        plan = connection.execute(f"EXPLAIN QUERY PLAN {FIGURES_OF_TASK}", ("t",)).fetchall()
        assert "COVERING INDEX submissions_figures" in str(plan)  # a task's figures read from the index alone
        plan = connection.execute(f"EXPLAIN QUERY PLAN {SCORES_OF_TASK}", ("t",)).fetchall()
        assert "COVERING INDEX evaluations_scores" in str(plan)  # and its scores
        assert connection.execute("SELECT COUNT(*) FROM board_cells WHERE grouping = 'mark'").fetchone()[0] == 1
    with store.transaction(write=False) as tx:
        assert sum(len(tx.evaluations(t)) for t in TASK_MAP) == len(SUBS)


def test_a_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    from arena_core import ArenaError

    path = tmp_path / "new.db"
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA user_version = 10")
    with pytest.raises(ArenaError, match=r"new\.db: written by a newer arena-core \(schema version 10; this one reads up to 9\)"):
        SQLiteStore(path)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_an_id_stored_for_another_task_is_refused_unless_moved_on_purpose(arena: Arena, tmp_path: Path, kind: str) -> None:
    store = MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "a.db")
    tasks = {"t1": {"id": "t1"}, "t2": {"id": "t2"}}
    first = {"id": "run", "task_id": "t1", "total_tokens": 100, "tool_calls": 2, "tool": "a"}
    arena.process([first], store=store, tasks=tasks)
    with pytest.raises(ValidationError, match=r"stored for task 't1'; ids are never reused") as refused:
        arena.process([{**first, "task_id": "t2"}], store=store)
    assert refused.value.code == "duplicate_id"
    with store.transaction(write=False) as tx:  # nothing moved
        assert [e.submission_id for e in tx.evaluations("t1")] == ["run"] and tx.evaluations("t2") == []
    arena.process([{**first, "task_id": "t2"}], store=store, replace=True)
    with store.transaction(write=False) as tx:
        assert [e.submission_id for e in tx.evaluations("t2")] == ["run"]
        assert [s.id for s in tx.submissions("t2")] == ["run"]
        if kind == "sqlite":  # the moved run left its first task's cells (looked up with the batch's others)
            assert {(row[0], row[1]) for row in tx.board_cells("tool")} == {("a", "t2")}


def test_arena_ingest_refuses_a_moved_id(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    (tmp_path / "tasks.json").write_text(json.dumps([{"id": "t1"}, {"id": "t2"}]))
    for task_id in ("t1", "t2"):
        (tmp_path / f"{task_id}.jsonl").write_text(json.dumps({"id": "run", "task_id": task_id, "total_tokens": 1,
                                                               "tool_calls": 1}) + "\n")
    ingest = [sys.executable, "-m", "arena_core", "ingest", "--tasks", "tasks.json", "--store", "a.db"]
    assert subprocess.run([*ingest, "t1.jsonl"], cwd=tmp_path, capture_output=True).returncode == 0
    moved = subprocess.run([*ingest, "t2.jsonl"], cwd=tmp_path, capture_output=True, text=True)
    assert moved.returncode == 2 and "stored for task 't1'" in moved.stderr
    assert subprocess.run([*ingest, "t2.jsonl", "--replace"], cwd=tmp_path, capture_output=True).returncode == 0


@pytest.mark.parametrize("fresh_count", [1, 7, 400])
def test_a_batch_is_placed_among_stored_scores_as_a_ranking_of_all_of_them(fresh_count: int) -> None:
    """A batch's ranks and percentiles, counted in memory among its task's stored scores by a
    binary search of each stored score among the new ones (``standings.place``), equal
    SciPy's minimum ranks of all of the task's scores and the share strictly below each, on
    scores full of ties (within the batch and with stored ones) and with re-submitted ids,
    whose stored rows give way; each tool's count and marks are the stored rows'."""
    import numpy as np
    from scipy.stats import rankdata

    from arena_core.model.records import Evaluation
    from arena_core.store.standings import Scores, _rank_counted, place

    rng = np.random.default_rng(fresh_count)
    stored_scores = rng.integers(0, 30, 3_000) / 2  # few distinct values: ties everywhere
    ids = [f"s{i}" for i in range(len(stored_scores))]
    tools = [f"tool-{i % 4}" for i in range(len(ids))]
    marks = np.array([t == "tool-3" for t in tools])
    again = set(rng.choice(len(ids), min(fresh_count // 2, 50), replace=False).tolist())
    fresh_ids = [f"s{i}" for i in sorted(again)] + [f"new{i}" for i in range(fresh_count - len(again))]
    fresh_scores = rng.integers(0, 32, fresh_count) / 2
    scored = [Evaluation(submission_id=i, task_id="t", overall_score=float(v), scores={}, weights={},
                         weight_profile="p", unadjusted_overall_score=float(v), evaluated_at="2026-01-01", tool="tool-0")
              for i, v in zip(fresh_ids, fresh_scores, strict=True)]  # fmt: skip

    marked: list[tuple[str, bool]] = []
    tx = type("Tx", (), {"mark_provisional": lambda self, task, tool, mark: marked.append((tool, mark)),
                         "put_evaluations": lambda self, evaluations: None})()  # fmt: skip
    standing = place(Scores(ids, stored_scores, tools, marks), scored)
    ranked = _rank_counted(tx, "t", scored, 2, standing, None)
    looked_up = {f"s{i}" for i in again}  # what a batch that looked its ids up passes
    assert place(Scores(ids, stored_scores, tools, marks), scored, looked_up) == standing

    kept = [k for k, i in enumerate(ids) if i not in set(fresh_ids)]
    assert len(kept) == len(ids) - len(again)
    everyone = np.concatenate([stored_scores[kept], fresh_scores])
    ranks = rankdata(-everyone, method="min")[len(kept):]
    below = np.array([(everyone < v).sum() for v in fresh_scores])
    assert [e.overall_ranking for e in ranked] == ranks.tolist()
    assert [e.percentile for e in ranked] == [round(b / len(everyone) * 100, 1) for b in below.tolist()]
    kept_tools = [tools[k] for k in kept]
    assert standing.tools == {t: (kept_tools.count(t), t == "tool-3", t == "tool-3") for t in set(kept_tools)}
    assert marked == [("tool-3", False)]  # every tool has 2 runs or more: tool-3's stored marks go


def test_a_later_batch_s_outliers_are_judged_against_its_task_s_whole_history(arena: Arena, store: Store) -> None:
    """A batch flags its own runs only, each judged by the spec's rules against the median of
    every run of its task (stored and new): as detecting outliers among all of them and keeping
    the batch's. A run of few tokens is an outlier against a history of large ones, and not
    against its own batch of small ones alone."""
    from arena_core import Submission, structure
    from arena_core.stats.quality import detect_outliers

    planted = [s for s in SUBS if s.get("meta", {}).get("planted_outlier")]
    history = [s for s in SUBS if s not in planted]
    run(arena, history, store)
    small = [{**s, "id": f"{s['id']}-small", "total_tokens": 10, "execution_time": 2.0, "tool_calls": 3} for s in history[:6]]
    result = run(arena, planted + small, store)
    everyone = [structure(s, Submission) for s in history + planted + small]
    mine = {s["id"] for s in planted + small}
    expected = [o for o in detect_outliers(everyone) if o.submission_id in mine]
    assert list(result.outliers) == expected
    assert {o.submission_id for o in expected} > {s["id"] for s in planted}  # the small runs are flagged too
    assert not detect_outliers([structure(s, Submission) for s in small])  # which their batch alone would not


@pytest.mark.parametrize(("scope", "sorts"), [("task", 1), ("task_tool", 2)])
def test_a_batch_sorts_its_tasks_tokens_once_for_baselines_and_outliers_under_the_task_scope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scope: str, sorts: int
) -> None:
    """Under the task scope a task's rows are its baseline's, so the outlier check reads the
    token medians the baseline's order sorted (one sort of every stored run's tokens a batch,
    not two); under another scope the baselines' groups are not the tasks, and the outlier
    check sorts its own. Either way the batch's outliers are the spec's among all the task's
    runs."""
    from arena_core import Submission, structure
    from arena_core.engine.grouporder import GroupOrder
    from arena_core.stats.quality import detect_outliers

    scoped, store = Arena({"baseline_scope": scope}, autoload=False), SQLiteStore(tmp_path / "arena.db")
    planted = [s for s in SUBS if s.get("meta", {}).get("planted_outlier")]
    history = [s for s in SUBS if s not in planted]
    run(scoped, history, store)
    sorted_fields: list[str] = []
    real = GroupOrder.sorted
    monkeypatch.setattr(GroupOrder, "sorted", lambda self, field: sorted_fields.append(field) or real(self, field))
    small = [{**s, "id": f"{s['id']}-small", "total_tokens": 10, "execution_time": 2.0, "tool_calls": 3} for s in history[:6]]
    result = run(scoped, planted + small, store)
    # every baseline built (a table builds each when read), some from the task's runs
    assert [b for b in result.baselines.values() if b.submission_count] and sorted_fields.count("total_tokens") == sorts
    everyone = [structure(s, Submission) for s in history + planted + small]
    mine = {s["id"] for s in planted + small}
    assert list(result.outliers) == [o for o in detect_outliers(everyone) if o.submission_id in mine] != []


@pytest.mark.parametrize("scope", ["task_tool", "task_tool_model"])
def test_a_batch_under_a_scoped_baseline_keys_each_group_as_evaluate_many_does(store: Store, scope: str) -> None:
    """Under a baseline per task and tool (and model), a batch on a store scores as evaluate_many
    does, and stores one baseline per group, keyed by the task and the group's names."""
    scoped = Arena({"baseline_scope": scope}, autoload=False)
    result = run(scoped, SUBS, store)
    expected = scoped.evaluate_many(SUBS, TASK_MAP)
    assert [e.overall_score for e in result.evaluations] == [e.overall_score for e in expected]
    groups = {(s["task_id"], s.get("tool"), *((s.get("model"),) if scope == "task_tool_model" else ())) for s in SUBS}
    assert set(result.baselines) == {"\x1f".join(g or "" for g in group) for group in groups}


def test_a_ranked_copy_is_attrs_evolve() -> None:
    """The pipeline sets a run's standing by writing a copy's ``__dict__`` (attrs' own way of
    making a frozen dict class), not ``attrs.evolve``: it equals evolve's copy field for field,
    leaves the evaluation it copied as it was, and is sound only while no field of an
    evaluation validates or converts (which this checks)."""
    import attrs

    from arena_core.model.records import Evaluation
    from arena_core.store.standings import _standing_of

    assert all(f.validator is None and f.converter is None for f in attrs.fields(Evaluation))
    ev = Evaluation(submission_id="r", task_id="t", overall_score=61.5, scores={"efficiency": 70.0},
                    weights={"efficiency": 1.0}, weight_profile="p", unadjusted_overall_score=61.5,
                    evaluated_at="2026-01-01", tool="tool-0", metric_scores={"x": 1.0}, baseline_version=1)  # fmt: skip
    copy = _standing_of(ev, 3, 41.5, True, 2)
    expected = attrs.evolve(ev, overall_ranking=3, percentile=41.5, provisional=True, baseline_version=2)
    assert attrs.asdict(copy) == attrs.asdict(expected) and copy == expected and type(copy) is Evaluation
    assert (ev.overall_ranking, ev.percentile, ev.provisional, ev.baseline_version) == (None, None, False, 1)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        copy.percentile = 0.0  # type: ignore[misc]


def test_a_batch_is_parsed_scored_and_written_with_the_cyclic_collector_paused(tmp_path: Path) -> None:
    """A batch's records hold no reference cycles, and its thousands of objects made Python's
    cyclic collector run again and again (and scan what the store keeps): the pipeline pauses it
    while it parses and while its transaction runs, and leaves it as it found it."""
    import gc

    arena, store = Arena(autoload=False), SQLiteStore(tmp_path / "arena.db")
    runs = [
        {"id": f"r{i}", "task_id": f"t{i % 5}", "tool": f"tool-{i % 3}", "total_tokens": 1000 + i, "tool_calls": 3,
         "execution_time": 10.0 + i % 7, "estimated_cost": 0.1, "success": i % 2 == 0}
        for i in range(3_000)
    ]  # fmt: skip
    tasks = {f"t{k}": {"id": f"t{k}", "category": "debugging"} for k in range(5)}
    started: list[int] = []

    def counted(phase: str, info: dict) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.collect()
    gc.callbacks.append(counted)
    try:
        arena.process(runs, store=store, tasks=tasks)
    finally:
        gc.callbacks.remove(counted)
    assert gc.isenabled()
    assert len(started) <= 10, started  # 87 times for these runs, unpaused; a few after the commit
    gc.disable()  # a host that keeps it off keeps it off
    try:
        arena.process([{**r, "id": f"again-{r['id']}"} for r in runs[:10]], store=store)
        assert not gc.isenabled()
    finally:
        gc.enable()
