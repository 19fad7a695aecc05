"""Pipeline batches into a large SQLite or PostgreSQL store, against a raw insert of the rows they write.

A store grows to ``--stored`` runs over ``--tasks`` tasks (100) by batches of 20,000 (as ``arena ingest``
would), in this process, so the store object keeps its tasks' figures as a long-running
service's does. Then, taking turns, each of ``--batches`` new batches of ``--batch`` runs (spread
over the tasks) goes through ``Arena.process`` (parse, baselines, scoring, outliers, ranks,
baseline versions, one transaction), and the reference writes the same rows (the batch's runs
and evaluations as the pipeline stored them, read back from its store) into a copy of the same
store with one ``executemany`` per table in one transaction: what the batch could cost if scoring
were free. The medians of both and their ratio are printed (target, issue 56: within 3x), and
the median of ``--singles`` one-run batches (the service's POST, in process).

    python benchmarks/pipeline.py                         # 100,000 stored runs, about a minute
    python benchmarks/pipeline.py --stored 1000000        # about three minutes of growth first
    python benchmarks/pipeline.py --stored 1000000 --store postgresql://arena@/postgres?host=/tmp/pg
    python benchmarks/pipeline.py --stored 5000 --tasks 500 --batch 500   # a run of every task a batch
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena_core import Arena  # noqa: E402
from arena_core.store import SQLiteStore  # noqa: E402


def task_names(count: int) -> list[str]:
    """The names of ``count`` tasks."""
    return [f"task-{k:03d}" for k in range(count)]


#: The tasks of the default benchmark.
TASKS = task_names(100)


def _run(i: int, rng: random.Random, tasks: list[str] = TASKS) -> dict:
    return {
        "id": f"run-{i}", "task_id": tasks[i % len(tasks)], "tool": f"tool-{i % 8}", "model": f"model-{i % 5}",
        "total_tokens": rng.randint(1000, 50000), "tool_calls": rng.randint(1, 60),
        "execution_time": rng.uniform(5, 900), "estimated_cost": rng.uniform(0.01, 2), "success": rng.random() < 0.6,
    }  # fmt: skip


def grow(arena: Arena, store: SQLiteStore, runs: int, names: list[str] = TASKS) -> None:
    """``runs`` runs over the tasks ``names`` stored by batches of 20,000 (the first batch stores the tasks)."""
    rng = random.Random(0)
    tasks = {t: {"id": t, "category": "debugging"} for t in names}
    for first in range(0, runs, 20_000):
        batch = [_run(i, rng, names) for i in range(first, min(runs, first + 20_000))]
        arena.process(batch, store=store, tasks=tasks)
        tasks = {}


def copy(source: Path, target: Path) -> None:
    """A copy of a SQLite file with what its write-ahead log holds (a file copy would miss it)."""
    with sqlite3.connect(source) as a, sqlite3.connect(target) as b:
        a.backup(b)
    a.close()
    b.close()


def written_rows(path: Path, ids: list[str]) -> dict[str, list[tuple]]:
    """Every column of the rows of ``ids`` in the runs' and the evaluations' tables."""
    found: dict[str, list[tuple]] = {}
    with sqlite3.connect(path) as db:
        for table, key in (("submissions", "id"), ("evaluations", "submission_id")):
            rows: list[tuple] = []
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                marks = ", ".join("?" * len(part))
                rows += db.execute(f"SELECT * FROM {table} WHERE {key} IN ({marks})", part).fetchall()
            found[table] = rows
    db.close()
    return found


def raw_insert(db: sqlite3.Connection, rows: dict[str, list[tuple]]) -> float:
    """Seconds to insert ``rows`` by one executemany per table, in one committed transaction."""
    start = time.perf_counter()
    db.execute("BEGIN IMMEDIATE")
    for table, values in rows.items():
        db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(values[0]))})", values)
    db.execute("COMMIT")
    return time.perf_counter() - start


def measure(
    stored: int, batch: int, batches: int, singles: int, folder: Path | None = None, tasks: int = 100
) -> dict[str, float]:
    """The medians (seconds) of a pipeline batch, of the raw insert of its rows and of a
    one-run batch, at ``stored`` runs over ``tasks`` tasks; the store and its reference copy are
    ``arena.db`` and ``reference.db`` in ``folder`` (a new temporary one by default)."""
    folder = folder or Path(tempfile.mkdtemp(prefix="arena-pipeline-bench-"))
    arena, store, names = Arena(autoload=False), SQLiteStore(folder / "arena.db"), task_names(tasks)
    grow(arena, store, stored, names)
    copy(folder / "arena.db", folder / "reference.db")
    os.sync()  # the copy's gigabytes written out before anything is timed, not while it is
    reference = sqlite3.connect(folder / "reference.db", isolation_level=None)
    reference.execute("PRAGMA synchronous = NORMAL")  # as the store's connections: WAL, no sync per commit
    rng = random.Random(1)
    fresh = 50_000_000
    pipeline, raw = [], []
    for _ in range(batches):
        runs = [_run(fresh + i, rng, names) for i in range(batch)]
        fresh += batch
        start = time.perf_counter()
        result = arena.process(runs, store=store)
        pipeline.append(time.perf_counter() - start)
        assert len(result.evaluations) == batch
        rows = written_rows(folder / "arena.db", [r["id"] for r in runs])
        assert all(len(values) == batch for values in rows.values())  # every run and evaluation written
        raw.append(raw_insert(reference, rows))
    one = []
    for _ in range(singles):
        run = _run(fresh, rng, names)
        fresh += 1
        start = time.perf_counter()
        arena.process([run], store=store)
        one.append(time.perf_counter() - start)
    reference.close()
    return {"pipeline": statistics.median(pipeline), "raw": statistics.median(raw), "single": statistics.median(one)}


def _database(url: str, name: str) -> str:
    """``url`` naming the database ``name`` instead of its own."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    return make_conninfo(**{**conninfo_to_dict(url), "dbname": name})


def _copy_database(admin: Any, source: str, target: str) -> None:
    """``target`` made anew as a copy of ``source`` (whose sessions are ended first: a template
    database has none). A store whose kept connection this ends opens a new one."""
    admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (source,))
    admin.execute(f'DROP DATABASE IF EXISTS "{target}" WITH (FORCE)')
    admin.execute(f'CREATE DATABASE "{target}" TEMPLATE "{source}"')


def pg_written_rows(db: Any, ids: list[str]) -> dict[str, list[tuple]]:
    """Every column of the rows of ``ids`` in the runs' and the evaluations' tables."""
    return {
        table: db.execute(f"SELECT * FROM {table} WHERE {key} = ANY(%s)", (ids,)).fetchall()
        for table, key in (("submissions", "id"), ("evaluations", "submission_id"))
    }


def pg_raw_insert(db: Any, rows: dict[str, list[tuple]]) -> float:
    """Seconds to insert ``rows`` by one executemany per table (psycopg's pipeline mode), in one
    committed transaction."""
    start = time.perf_counter()
    with db.transaction(), db.cursor() as cursor:
        for table, values in rows.items():
            cursor.executemany(f"INSERT INTO {table} VALUES ({', '.join(['%s'] * len(values[0]))})", values)
    return time.perf_counter() - start


def measure_postgres(
    url: str, stored: int, batch: int, batches: int, singles: int, *, keep: bool = False, tasks: int = 100
) -> dict[str, float]:
    """As :func:`measure`, on the PostgreSQL server of ``url``: the store grown once into the
    database ``arena_pipeline_grown_<stored>`` (kept, and reused by later runs), copied for the
    store and for the reference (``CREATE DATABASE ... TEMPLATE``). The store object starts
    without the figures a long-running one keeps: one untimed batch reads them first. ``keep``:
    the two copies are left (``arena_pipeline_store`` and ``arena_pipeline_reference``)."""
    import psycopg

    from arena_core.store.postgres import PostgresStore

    names = task_names(tasks)
    grown = f"arena_pipeline_grown_{stored}" + ("" if tasks == 100 else f"_{tasks}_tasks")
    work, copied = "arena_pipeline_store", "arena_pipeline_reference"
    admin = psycopg.connect(url, autocommit=True)
    if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (grown,)).fetchone() is None:
        admin.execute(f'CREATE DATABASE "{grown}"')
        grower = PostgresStore(_database(url, grown))
        grow(Arena(autoload=False), grower, stored, names)
    for target in (work, copied):
        _copy_database(admin, grown, target)
    arena, store = Arena(autoload=False), PostgresStore(_database(url, work))
    reads, reference = psycopg.connect(_database(url, work), autocommit=True), psycopg.connect(_database(url, copied))
    rng = random.Random(1)
    fresh = 50_000_000
    pipeline, raw = [], []
    for turn in range(batches + 1):
        runs = [_run(fresh + i, rng, names) for i in range(batch)]
        fresh += batch
        start = time.perf_counter()
        result = arena.process(runs, store=store)
        took = time.perf_counter() - start
        assert len(result.evaluations) == batch
        rows = pg_written_rows(reads, [r["id"] for r in runs])
        assert all(len(values) == batch for values in rows.values())  # every run and evaluation written
        inserted = pg_raw_insert(reference, rows)
        if turn:  # the first batch read the tasks' figures into the store object
            pipeline.append(took)
            raw.append(inserted)
    one = []
    for _ in range(singles):
        fresh += 1
        start = time.perf_counter()
        arena.process([_run(fresh, rng, names)], store=store)
        one.append(time.perf_counter() - start)
    for connection in (reads, reference):
        connection.close()
    for target in () if keep else (work, copied):  # the store's kept sessions ended with it
        admin.execute(f'DROP DATABASE "{target}" WITH (FORCE)')
    admin.close()
    return {"pipeline": statistics.median(pipeline), "raw": statistics.median(raw), "single": statistics.median(one)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stored", type=int, default=100_000, help="runs stored before the batches")
    parser.add_argument("--batch", type=int, default=5_000, help="runs in each timed batch")
    parser.add_argument("--batches", type=int, default=5, help="timed batches (and raw inserts)")
    parser.add_argument("--singles", type=int, default=100, help="timed one-run batches")
    parser.add_argument("--tasks", type=int, default=100, help="tasks the runs are spread over")
    parser.add_argument("--store", metavar="URL", help="a PostgreSQL server's postgresql:// URL (SQLite by default)")
    args = parser.parse_args()
    if args.store:
        found = measure_postgres(args.store, args.stored, args.batch, args.batches, args.singles, tasks=args.tasks)
    else:
        found = measure(args.stored, args.batch, args.batches, args.singles, tasks=args.tasks)
    ratio = found["pipeline"] / found["raw"]
    print(
        f"{'PostgreSQL' if args.store else 'SQLite'}, {args.stored:,} stored runs over {args.tasks:,} tasks, "
        f"batches of {args.batch:,}: pipeline {found['pipeline']:.3f} s, "
        f"raw insert of its rows {found['raw']:.3f} s: {ratio:.1f}x (target within 3x: "
        f"{'met' if ratio <= 3 else 'NOT met'})"
    )
    print(f"one run a batch: median {found['single'] * 1000:.1f} ms")


if __name__ == "__main__":
    main()
