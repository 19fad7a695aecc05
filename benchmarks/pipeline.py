"""Pipeline batches into a large SQLite store, against a raw insert of the rows they write.

A store grows to ``--stored`` runs over 100 tasks by batches of 20,000 (as ``arena ingest``
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena_core import Arena  # noqa: E402
from arena_core.store import SQLiteStore  # noqa: E402

TASKS = [f"task-{k:03d}" for k in range(100)]


def _run(i: int, rng: random.Random) -> dict:
    return {
        "id": f"run-{i}", "task_id": TASKS[i % len(TASKS)], "tool": f"tool-{i % 8}", "model": f"model-{i % 5}",
        "total_tokens": rng.randint(1000, 50000), "tool_calls": rng.randint(1, 60),
        "execution_time": rng.uniform(5, 900), "estimated_cost": rng.uniform(0.01, 2), "success": rng.random() < 0.6,
    }  # fmt: skip


def grow(arena: Arena, store: SQLiteStore, runs: int) -> None:
    """``runs`` runs stored by batches of 20,000 (the first batch stores the tasks)."""
    rng = random.Random(0)
    tasks = {t: {"id": t, "category": "debugging"} for t in TASKS}
    for first in range(0, runs, 20_000):
        arena.process([_run(i, rng) for i in range(first, min(runs, first + 20_000))], store=store, tasks=tasks)
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


def measure(stored: int, batch: int, batches: int, singles: int, folder: Path | None = None) -> dict[str, float]:
    """The medians (seconds) of a pipeline batch, of the raw insert of its rows and of a
    one-run batch, at ``stored`` runs; the store and its reference copy are ``arena.db`` and
    ``reference.db`` in ``folder`` (a new temporary one by default)."""
    folder = folder or Path(tempfile.mkdtemp(prefix="arena-pipeline-bench-"))
    arena, store = Arena(autoload=False), SQLiteStore(folder / "arena.db")
    grow(arena, store, stored)
    copy(folder / "arena.db", folder / "reference.db")
    os.sync()  # the copy's gigabytes written out before anything is timed, not while it is
    reference = sqlite3.connect(folder / "reference.db", isolation_level=None)
    reference.execute("PRAGMA synchronous = NORMAL")  # as the store's connections: WAL, no sync per commit
    rng = random.Random(1)
    fresh = 50_000_000
    pipeline, raw = [], []
    for _ in range(batches):
        runs = [_run(fresh + i, rng) for i in range(batch)]
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
        run = _run(fresh, rng)
        fresh += 1
        start = time.perf_counter()
        arena.process([run], store=store)
        one.append(time.perf_counter() - start)
    reference.close()
    return {"pipeline": statistics.median(pipeline), "raw": statistics.median(raw), "single": statistics.median(one)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stored", type=int, default=100_000, help="runs stored before the batches")
    parser.add_argument("--batch", type=int, default=5_000, help="runs in each timed batch")
    parser.add_argument("--batches", type=int, default=5, help="timed batches (and raw inserts)")
    parser.add_argument("--singles", type=int, default=100, help="timed one-run batches")
    args = parser.parse_args()
    found = measure(args.stored, args.batch, args.batches, args.singles)
    ratio = found["pipeline"] / found["raw"]
    print(
        f"{args.stored:,} stored runs, batches of {args.batch:,}: pipeline {found['pipeline']:.3f} s, "
        f"raw insert of its rows {found['raw']:.3f} s: {ratio:.1f}x (target within 3x: "
        f"{'met' if ratio <= 3 else 'NOT met'})"
    )
    print(f"one run a batch: median {found['single'] * 1000:.1f} ms")


if __name__ == "__main__":
    main()
