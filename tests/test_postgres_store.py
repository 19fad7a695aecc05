"""The PostgreSQL store beyond the contract tests it shares with SQLite (tests/test_pipeline.py,
tests/test_history.py): writers of several processes at once, schema versions, errors."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from arena_core import Arena
from arena_core.examples.synthetic import generate_arena
from arena_core.model.errors import ArenaError

psycopg = pytest.importorskip("psycopg")

from clirun import run_arena

from arena_core.store.postgres import SCHEMA_VERSION, PostgresStore  # noqa: E402


def test_writers_in_several_processes_at_once_lose_nothing(postgres_server) -> None:
    url = postgres_server()
    tasks, runs = generate_arena(tasks=3, submissions_per_task=40, seed=2)
    PostgresStore(url)  # the schema, before the writers race for it
    writer = textwrap.dedent(
        """
        import json, sys
        from arena_core import Arena
        from arena_core.store.postgres import PostgresStore
        url, part = sys.argv[1], int(sys.argv[2])
        runs, tasks = json.loads(sys.stdin.read())
        store = PostgresStore(url)
        arena = Arena(autoload=False)
        for start in range(0, len(runs), 5):  # many small batches, interleaving with the other writers
            arena.process(runs[start:start + 5], store=store, tasks={t["id"]: t for t in tasks})
        """
    )

    parts = [runs[i::4] for i in range(4)]
    processes = [
        subprocess.Popen([sys.executable, "-c", writer, url, str(i)], stdin=subprocess.PIPE, text=True,
                         stderr=subprocess.PIPE)  # fmt: skip
        for i in range(4)
    ]
    for process, part in zip(processes, parts, strict=True):
        process.stdin.write(json.dumps([part, tasks]))
        process.stdin.close()
    for process in processes:
        assert process.wait(timeout=300) == 0, process.stderr.read()
    store = PostgresStore(url)
    with store.transaction(write=False) as tx:
        stored = {s.id for t in tx.task_ids() for s in tx.submissions(t)}
        evaluated = {e.submission_id for t in tx.task_ids() for e in tx.evaluations(t)}
        versions = {t: [b.version for b in tx.baseline_versions(t)] for t in tx.task_ids()}
    assert stored == evaluated == {r["id"] for r in runs}  # 120 runs from 4 processes, 24 batches
    # Every batch that touched a task stored its baseline's next version: 1, 2, ... without a gap
    # or a repeat, as one writer after another; with 24 batches of 5, each task was touched often.
    for task, kept in versions.items():
        assert kept == list(range(1, len(kept) + 1)) and len(kept) >= 8, (task, kept)


def test_a_newer_schema_is_refused_and_passwords_stay_out_of_messages(postgres_server) -> None:
    url = postgres_server()
    PostgresStore(url)
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("UPDATE arena_schema SET version = %s", (SCHEMA_VERSION + 1,))
    with pytest.raises(ArenaError, match=rf"newer arena-core \(schema version {SCHEMA_VERSION + 1}; this one reads up to {SCHEMA_VERSION}\)"):
        PostgresStore(url)
    secret = url.replace("postgresql://arena@", "postgresql://arena:hunter2@").replace("arena_", "missing_")
    with pytest.raises(ArenaError) as caught:
        PostgresStore(secret, timeout=2)
    assert "hunter2" not in str(caught.value) and "postgresql://arena:***@" in str(caught.value)


def test_a_failed_batch_leaves_nothing_behind(postgres_server) -> None:
    url = postgres_server()
    store = PostgresStore(url)
    tasks, runs = generate_arena(tasks=2, submissions_per_task=6, seed=4)
    bad = [*runs, {**runs[0], "id": "late", "task_id": "no-such-task"}]
    with pytest.raises(Exception, match="no-such-task"):
        Arena(autoload=False).process(bad, store=store, tasks={t["id"]: t for t in tasks})
    with store.transaction(write=False) as tx:
        assert tx.task_ids() == [] and tx.submissions(tasks[0]["id"]) == []


def test_the_commands_take_a_postgresql_url_wherever_they_take_a_database(postgres_server, tmp_path) -> None:

    url = postgres_server()

    def arena(*args: str) -> subprocess.CompletedProcess:
        return run_arena(*args, cwd=tmp_path)

    stored = arena("ingest", "--example", "--store", url)
    assert stored.returncode == 0, stored.stderr
    assert stored.stdout.startswith("Stored 180 evaluations for 12 tasks in postgresql://arena@/")
    # The same board as from a SQLite file of the same batch.
    assert arena("ingest", "--example", "--store", "arena.db").returncode == 0
    from_postgres, from_sqlite = (arena("leaderboard", "--store", where).stdout for where in (url, "arena.db"))
    assert from_postgres == from_sqlite and "aider/diff" in from_postgres
    history = arena("history", "--store", url)
    assert history.returncode == 0 and "Baselines by version" in history.stdout
    card = arena("card", "frontend-001/000", "--store", url)
    assert card.returncode == 0 and "Score card: frontend-001/000" in card.stdout
    assert arena("tasks", "--store", url).returncode == 0
    # arena serve's tokens live in the database too: made by one command, listed and revoked by others.
    pytest.importorskip("fastapi", reason="the service extra is not installed")
    made = arena("serve", "token", "create", "--role", "operator", "--note", "ops", "--store", url)
    assert made.returncode == 0, made.stderr
    token_id = made.stdout.split()[1]
    listed = arena("serve", "token", "list", "--store", url)
    assert token_id in listed.stdout and "ops" in listed.stdout
    assert arena("serve", "token", "revoke", token_id, "--store", url).returncode == 0
    with psycopg.connect(url) as connection:
        assert connection.execute("SELECT revoked IS NOT NULL FROM service_tokens").fetchall() == [(True,)]
    wrong = arena("serve", "--store", "mysql://db/arena")
    assert wrong.returncode == 2 and "expected sqlite:///PATH or postgresql://URL" in wrong.stderr


def test_the_cells_follow_every_stored_evaluation_and_a_version_1_database_gets_them(postgres_server) -> None:
    from arena_core.store.cells import task_table

    url = postgres_server()
    tasks, runs = generate_arena(tasks=4, submissions_per_task=12, seed=9)
    store, arena = PostgresStore(url), Arena(autoload=False)
    arena.process(runs[:30], store=store, tasks={t["id"]: t for t in tasks})
    arena.process([{**r, "total_tokens": r["total_tokens"] * 2} for r in runs[:10]] + runs[30:], store=store, replace=True)

    def boards() -> tuple[list, list]:
        with store.transaction(write=False) as tx:
            cells = task_table(tx.board_cells("tool"))
            stored = [e for t in tx.task_ids() for e in tx.evaluations(t)]  # as made on arrival
        return arena.leaderboard(cells), arena.leaderboard(stored)

    from_cells, from_evaluations = boards()  # replaced runs left their cells: the board of what is stored
    assert [(g.group, g.n_runs, g.rank) for g in from_cells] == [(g.group, g.n_runs, g.rank) for g in from_evaluations]
    assert [g.score for g in from_cells] == [g.score for g in from_evaluations]  # exact sums of hundredths
    assert sum(g.n_runs for g in from_cells) == len(runs)
    with psycopg.connect(url, autocommit=True) as connection:  # as version 1 left it: no cells
        connection.execute("DROP TABLE board_cells")
        connection.execute("UPDATE arena_schema SET version = 1")
    store = PostgresStore(url)  # migrated on open, the cells filled from the stored evaluations
    again, _ = boards()
    assert [(g.group, g.n_runs) for g in again] == [(g.group, g.n_runs) for g in from_cells]
    assert [g.score for g in again] == [g.score for g in from_cells]  # summed anew, to the same bits


def test_two_service_instances_on_one_database_lose_nothing(postgres_server) -> None:
    import random
    import threading

    pytest.importorskip("fastapi", reason="the service extra is not installed")
    from fastapi.testclient import TestClient

    from arena_core import to_dict
    from arena_core.service.app import create_app
    from arena_core.service.tokens import TokenStore

    url = postgres_server()
    arena = Arena({"workspace_owner": "id"}, autoload=False)
    instances = [TestClient(create_app(arena, PostgresStore(url), TokenStore(url), allow_local_runner=True))
                 for _ in range(2)]  # fmt: skip
    tokens = TokenStore(url)  # what one instance's operator creates, the other knows
    operator = {"Authorization": f"Bearer {tokens.create('operator')[1]}"}
    for task in ("t1", "t2", "t3"):
        done = instances[1].put(f"/tasks/{task}", json={"category": "debugging", "success_criteria": [
            {"type": "no_errors"}]}, headers=operator)  # fmt: skip
        assert done.status_code == 200, done.text
    rng = random.Random(4)
    runs = [{"id": f"run-{i}", "task_id": f"t{i % 3 + 1}", "tool": ("aider", "other", "third")[i % 3 - (i % 2)],
             "model": f"m{i % 2}", "total_tokens": rng.randint(1000, 20000), "tool_calls": rng.randint(1, 40),
             "execution_time": rng.uniform(10, 900), "success": rng.random() < 0.7} for i in range(120)]  # fmt: skip
    answers: list[int] = []

    def post(k: int) -> None:
        for run in runs[k::4]:
            answers.append(instances[k % 2].post("/submissions", json=run, headers=operator).status_code)

    threads = [threading.Thread(target=post, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [201] * 120
    store = PostgresStore(url)
    with store.transaction(write=False) as tx:
        assert sorted(e.submission_id for t in tx.task_ids() for e in tx.evaluations(t)) == sorted(r["id"] for r in runs)
    expected = [to_dict(r) for r in arena.leaderboard(store=store)]
    for client in instances:  # each instance's board, from the shared cells, is the store's
        served = client.get("/leaderboard", headers=operator).json()
        assert [(r["group"], r["n_runs"], r["rank"]) for r in served] == [(r["group"], r["n_runs"], r["rank"]) for r in expected]
        assert [r["score"] for r in served] == pytest.approx([r["score"] for r in expected], abs=1e-9)
    page = instances[0].get("/tasks/t1/rankings?limit=5", headers=operator).json()
    scores = [e["overall_score"] for e in page]
    assert len(page) == 5 and scores == sorted(scores, reverse=True)


def test_a_batch_writes_only_its_own_rows(postgres_server) -> None:
    """Ranks are derived on read, so a run added to a task rewrites none of its stored rows:
    every other row keeps the transaction id that wrote it (PostgreSQL's ``xmin``)."""
    url = postgres_server()
    tasks, runs = generate_arena(tasks=2, submissions_per_task=30, seed=3)
    store, arena = PostgresStore(url), Arena(autoload=False)
    arena.process(runs[:-1], store=store, tasks={t["id"]: t for t in tasks})

    def writers() -> dict[str, dict[str, str]]:
        with psycopg.connect(url) as connection:
            return {table: dict(connection.execute(f"SELECT {key}, xmin::text FROM {table}").fetchall())
                    for table, key in (("submissions", "id"), ("evaluations", "submission_id"))}  # fmt: skip

    before = writers()
    last = runs[-1]  # its tool has runs enough in its task already: no provisional mark moves
    assert sum(r["tool"] == last["tool"] and r["task_id"] == last["task_id"] for r in runs) >= 3
    [evaluation] = arena.process([last], store=store).evaluations
    after = writers()
    for table in after:
        changed = {key for key, xmin in after[table].items() if before[table].get(key) != xmin}
        assert changed == {last["id"]}, table
    with store.transaction(write=False) as tx:
        ranked = {e.submission_id: e for e in tx.evaluations(last["task_id"])}
    assert ranked[last["id"]] == evaluation  # its rank among the others, derived as it is read
    ranks = sorted(e.overall_ranking for e in ranked.values())
    assert ranks[0] == 1 and len(ranked) == sum(r["task_id"] == last["task_id"] for r in runs)


def test_a_version_3_database_gets_typed_columns_and_its_stored_ranks_are_read_anew(postgres_server) -> None:
    from arena_core.model.serde import to_dict

    url = postgres_server()
    tasks, runs = generate_arena(tasks=3, submissions_per_task=10, seed=4)
    store, arena = PostgresStore(url), Arena(autoload=False)
    arena.process(runs, store=store, tasks={t["id"]: t for t in tasks})

    def read(store: PostgresStore) -> tuple[list, list]:
        with store.transaction(write=False) as tx:
            ids = tx.task_ids()
            columns = [tx.submission_columns(t) for t in ids]
            return [e for t in ids for e in tx.evaluations(t)], [(c.ids, c.tools, c.models, c.numeric) for c in columns]

    evaluations, figures = read(store)
    with psycopg.connect(url, autocommit=True) as connection:  # as version 3 left it
        for e in evaluations:  # each record with the rank it was written with (here a stale one)
            connection.execute("UPDATE evaluations SET data = %s WHERE submission_id = %s",
                               (json.dumps(to_dict(e) | {"overall_ranking": 99, "percentile": 1.0}), e.submission_id))  # fmt: skip
        for table, names in (("submissions", "tool, model, total_tokens, tool_calls, iterations, execution_time, "
                              "estimated_cost"), ("evaluations", "tool, overall_score, provisional, model, "
                                                  "evaluated_at, baseline_version")):  # fmt: skip
            for name in names.split(", "):
                connection.execute(f"ALTER TABLE {table} DROP COLUMN {name}")
        connection.execute("UPDATE arena_schema SET version = 3")
    store = PostgresStore(url)  # migrated on open: the columns filled from the records
    again, figures_again = read(store)
    assert again == evaluations  # ranks and percentiles derived from the scores, not the stale 99
    for (ids, tools, models, numeric), (ids2, tools2, models2, numeric2) in zip(figures, figures_again, strict=True):
        assert (ids, tools, models) == (ids2, tools2, models2)
        for name, values in numeric.items():
            assert values.tolist() == pytest.approx(numeric2[name].tolist(), nan_ok=True)
    with psycopg.connect(url) as connection:
        assert connection.execute("SELECT version FROM arena_schema").fetchone()[0] == SCHEMA_VERSION == 6
        indexes = {row[0] for row in connection.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'evaluations'")}
        assert {"evaluations_scores", "evaluations_score", "evaluations_tool"} <= indexes  # made again with the columns
        assert "evaluations_task" not in indexes  # the scores' index serves its look-ups


def test_connections_are_kept_per_thread_and_process_and_a_dead_one_is_replaced(postgres_server) -> None:
    import os
    import threading

    from arena_core.store.pgconnections import HeldConnections

    url = postgres_server()
    held = HeldConnections(url)

    def backend() -> int:
        with held.connection() as connection:
            return connection.execute("SELECT pg_backend_pid()").fetchone()[0]

    first = backend()
    assert backend() == first  # kept between uses
    with held.connection() as outer, outer.transaction():
        outer.execute("SELECT 1")
        assert backend() != first  # a use inside a transaction of this thread: a connection of its own
    assert backend() == first
    other: list[int] = []
    thread = threading.Thread(target=lambda: other.append(backend()))
    thread.start()
    thread.join()
    assert other and other[0] != first  # another thread, another connection
    child = os.fork()
    if child == 0:  # the child connects anew and, exiting, leaves the parent's session alone
        code = 0 if backend() != first else 1
        os._exit(code)
    assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0
    assert backend() == first  # the parent's connection still serves it
    with psycopg.connect(url, autocommit=True) as admin:  # the server ends the kept session
        admin.execute("SELECT pg_terminate_backend(%s)", (first,))
    with pytest.raises(psycopg.OperationalError):
        backend()
    assert backend() not in (first, None)  # the dead one was dropped: the next use connects anew


def test_a_transaction_on_a_kept_connection_the_server_ended_begins_again_on_a_new_one(postgres_server) -> None:
    """The server ends the store's kept session (a restart, a failover, an idle timeout): the next
    write does not fail with it, but begins again on a new connection and stores its run; a
    failure once the caller's work began, or on a new connection, is still an error."""
    from arena_core import Arena, ArenaError

    url = postgres_server()
    store, arena = PostgresStore(url), Arena(autoload=False)
    task = {"t": {"id": "t", "category": "debugging"}}
    arena.process([{"id": "a", "task_id": "t", "tool": "x", "total_tokens": 100, "tool_calls": 1}], store=store, tasks=task)

    def backend() -> int:
        with store.transaction(write=False) as tx:
            return int(tx._c.execute("SELECT pg_backend_pid()").fetchone()[0])

    first = backend()
    assert backend() == first  # kept
    with psycopg.connect(url, autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", (first,)).fetchone()[0]  # the attack ran
    arena.process([{"id": "b", "task_id": "t", "tool": "x", "total_tokens": 90, "tool_calls": 1}], store=store)
    assert backend() != first
    with store.transaction(write=False) as tx:
        assert [e.submission_id for e in tx.evaluations("t")] == ["a", "b"]
    with pytest.raises(ArenaError, match="terminating connection"):  # ended while the caller's work ran
        with store.transaction(write=False) as tx:
            with psycopg.connect(url, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (tx._c.execute("SELECT pg_backend_pid()").fetchone()[0],))
            tx._c.execute("SELECT 1")


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_stored_run_reads_back_as_it_was_whatever_its_json_holds(kind: str, postgres_server, tmp_path) -> None:
    """A run's record is written by orjson, or by the standard library where orjson would lose
    something (a NaN, an infinity, an integer past 64 bits: it writes ``null`` or refuses), so
    every run reads back equal to what was stored, with a ``None``, a non-ASCII name and plain
    figures beside them."""
    import math

    from arena_core.store import SQLiteStore
    from arena_core.store.statements import dump_record

    store = PostgresStore(postgres_server()) if kind == "postgresql" else SQLiteStore(tmp_path / "arena.db")
    arena = Arena(autoload=False)
    metas = [
        {"note": "plain"},
        {"ratio": math.nan},
        {"limit": math.inf, "floor": -math.inf},
        {"big": 10**30, "small": -(2**64)},
        {"missing": None},
        {"name": "café ✓ 日本", "nested": {"x": [1.5, 1e-7, 1e300]}},
    ]
    runs = [
        {"id": f"r{i}", "task_id": "t", "tool": "aider", "total_tokens": 100 + i, "tool_calls": 2,
         "execution_time": 1.25, "estimated_cost": 0.1, "success": True, "meta": meta}
        for i, meta in enumerate(metas)
    ]  # fmt: skip
    arena.process(runs, store=store, tasks={"t": {"id": "t", "category": "debugging"}})
    with store.transaction(write=False) as tx:
        read = {s.id: s for s in tx.submissions("t")}
    for run in runs:
        stored = read[run["id"]]
        assert repr(stored.meta) == repr(run["meta"])  # repr: NaN equal to NaN, floats to the bit
        assert stored == arena.structure_submission(run) or run["meta"] is metas[1]  # NaN != NaN
    texts = [dump_record(arena.structure_submission(run)) for run in runs]
    assert '"ratio":NaN' in texts[1] and "Infinity" in texts[2] and str(10**30) in texts[3]  # the library's
    assert '"missing":null' in texts[4] and "café" in texts[5]  # orjson's leaves non-ASCII unescaped


def test_a_write_transaction_in_pipeline_mode_reads_each_statements_own_rows(postgres_server) -> None:
    """A write transaction sends its statements in psycopg's pipeline mode. A cursor reused
    there can hand over an earlier statement's result that arrived first (the store's tests
    under load met "the last operation didn't produce records: INSERT 0 1", a few runs in ten).
    Each statement runs on a cursor of its own, so the rows read are the statement's own,
    whatever was sent before it."""
    from arena_core.store.pgpipeline import StatementCursor

    with psycopg.connect(postgres_server(), autocommit=True) as connection:
        connection.execute("CREATE TABLE pipelined (n integer)")
        with connection.pipeline() as pipeline, connection.transaction():
            statements = StatementCursor(connection)
            statements.execute("INSERT INTO pipelined VALUES (1)")
            first = statements.execute("SELECT n FROM pipelined")
            statements.execute("INSERT INTO pipelined VALUES (2)")
            pipeline.sync()  # both INSERTs' results have arrived
            assert sorted(statements.execute("SELECT n FROM pipelined").fetchall()) == [(1,), (2,)]
            assert first.fetchall() == [(1,)]  # an earlier read keeps its own rows
            statements.executemany("INSERT INTO pipelined VALUES (%s)", [(3,), (4,)])
            statements.execute("SELECT count(*) FROM pipelined")
            assert statements.fetchone() == (4,)


def test_a_statement_that_fails_after_it_was_sent_rolls_the_whole_transaction_back(postgres_server) -> None:
    """In pipeline mode a failing write is reported when a later result is read, or at the
    commit: the transaction still fails as a whole, with the server's reason, and nothing of it
    is stored."""
    from arena_core.model.records import Task
    from arena_core.model.serde import structure

    store = PostgresStore(postgres_server())
    arena = Arena(autoload=False)
    with pytest.raises(ArenaError, match="no_such_table"):
        with store.transaction() as tx:
            tx.put_task(structure({"id": "kept?", "category": "debugging"}, Task))
            tx._c.execute("INSERT INTO no_such_table VALUES (1)")  # sent; its failure comes back later
    with store.transaction(write=False) as tx:
        assert tx.get_task("kept?") is None
    arena.process(
        [{"id": "r1", "task_id": "t", "tool": "a", "total_tokens": 10, "tool_calls": 1, "execution_time": 1.0,
          "estimated_cost": 0.1, "success": True}],
        store=store, tasks={"t": {"id": "t", "category": "debugging"}},
    )  # fmt: skip
    with store.transaction(write=False) as tx:  # the store's next transaction works
        assert [s.id for s in tx.submissions("t")] == ["r1"]
