"""``arena reprice`` of a SQLite store against the same work done as one batch.

A store of runs over 100 tasks, a fifth of them of a model no price table knows (refused by
name, as real stores hold), is repriced by ``arena_core.store.repricing.reprice`` (a task at a
time: each run priced, the task's baselines re-derived and stored as new versions, every run
scored, ranked and stored, the evaluations replaced kept as versions). The reference does the
same work as one batch, the fastest way arena-core's own parts allow: every record read and
priced with the same pricer, all runs scored by the batch path against baselines computed from
them, and the runs, the new evaluations and the kept ones written by one statement each into
tables of the same shape. The two give the same overall score to every run (checked first);
each runs on its own copy of the store, taking turns (three times by default), and the medians
are printed with their ratio (target: within 3x), and the peak memory of each in a child process.

    python benchmarks/reprice.py                  # 20,000 runs
    python benchmarks/reprice.py --runs 100000
    python benchmarks/reprice.py --runs 1000000 --rounds 1   # about half an hour
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena_core import Arena, to_dict  # noqa: E402
from arena_core.model.errors import ValidationError  # noqa: E402
from arena_core.store import SQLiteStore  # noqa: E402
from arena_core.store.repricing import reprice  # noqa: E402

TASKS = [f"task-{k:03d}" for k in range(100)]
MODELS = ["gpt-4o", "claude-sonnet-4-20250514", "gemini-2.5-pro", "o3-mini", "a-model-no-table-knows"]


def _run(i: int, rng: random.Random) -> dict:
    return {
        "id": f"run-{i}", "task_id": TASKS[i % len(TASKS)], "tool": f"tool-{i % 8}", "model": MODELS[i % 5],
        "input_tokens": rng.randint(1000, 40000), "output_tokens": rng.randint(100, 9000), "total_tokens": 50000,
        "tool_calls": rng.randint(1, 60), "execution_time": rng.uniform(5, 900),
        "estimated_cost": rng.uniform(0.01, 2), "success": rng.random() < 0.6,
        "started_at": f"2025-{1 + i % 9:02d}-{1 + i % 28:02d}T10:00:00Z",
    }  # fmt: skip


def grow(path: Path, runs: int) -> None:
    rng = random.Random(0)
    arena, store = Arena(autoload=False), SQLiteStore(path)
    tasks = {t: {"id": t, "category": "debugging"} for t in TASKS}
    for first in range(0, runs, 20_000):
        arena.process([_run(i, rng) for i in range(first, min(runs, first + 20_000))], store=store, tasks=tasks)


def copy(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite store, its write-ahead log included (a file copy misses
    what the log holds)."""
    with sqlite3.connect(source) as a, sqlite3.connect(target) as b:
        a.backup(b)
    a.close()
    b.close()


def _priced() -> Arena:
    return Arena({"cost_source": "priced"}, autoload=False)


def arena_core(path: Path) -> dict[str, float]:
    reprice(_priced(), SQLiteStore(path), reason="benchmark")
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT submission_id, overall_score FROM evaluations"))


def reference(path: Path) -> dict[str, float]:
    """The same repricing as one batch: read, price, score, write by one statement each."""
    plain = Arena(autoload=False)
    pricer = _priced().pricer
    assert pricer is not None
    stamp = "2026-01-01T00:00:00+00:00"
    with sqlite3.connect(path) as db:
        tasks = {t: json.loads(d) for t, d in db.execute("SELECT id, data FROM tasks")}
        runs = []
        for (data,) in db.execute("SELECT data FROM submissions ORDER BY seq"):
            run = plain.structure_submission(orjson.loads(data))
            with contextlib.suppress(ValidationError):  # a model no table knows keeps its stored cost
                run = pricer.price(run)
            runs.append(run)
        scored = plain.evaluate_many(runs, tasks, evaluated_at=stamp)
        db.execute("CREATE TABLE new_evaluations (submission_id TEXT, overall_score REAL, data TEXT)")
        db.execute("CREATE TABLE new_versions AS SELECT submission_id, data FROM evaluations WHERE 0")
        db.execute("INSERT INTO new_versions SELECT submission_id, data FROM evaluations")
        db.executemany(
            "UPDATE submissions SET data = ? WHERE id = ?", [(orjson.dumps(to_dict(r)).decode(), r.id) for r in runs]
        )
        db.executemany(
            "INSERT INTO new_evaluations VALUES (?, ?, ?)",
            [(e.submission_id, e.overall_score, orjson.dumps(to_dict(e)).decode()) for e in scored],
        )
        return dict(db.execute("SELECT submission_id, overall_score FROM new_evaluations"))


def _timed(kind: str, store: Path, work: Path) -> tuple[float, int]:
    """One run of ``kind`` on a fresh copy of ``store``, in a child process: seconds and peak KB."""
    copied = work / f"{kind}.db"
    copy(store, copied)
    code = (
        f"import sys, time; sys.path.insert(0, {str(ROOT)!r}); sys.argv = ['x'];"
        f"from benchmarks.reprice import {kind.replace('-', '_')} as work; from pathlib import Path;"
        f"t = time.perf_counter(); work(Path({str(copied)!r})); "
        # the child's own peak (VmHWM): getrusage's keeps the parent's from before the exec
        "peak = next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1];"
        "print(time.perf_counter() - t, peak)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    copied.unlink()
    return float(out[0]), int(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3, help="turns each side takes (the median is printed)")
    arguments = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="arena-reprice-bench-"))
    store = work / "store.db"
    grow(store, arguments.runs)
    for kind in ("arena_core", "reference"):  # the same overall score for every run, first
        copy(store, work / f"{kind}-check.db")
        found = globals()[kind](work / f"{kind}-check.db")
        if kind == "arena_core":
            expected = found
        else:
            assert found == expected and len(found) == arguments.runs, (
                "the reference does not reprice as arena-core does"
            )
    times: dict[str, list[float]] = {"arena_core": [], "reference": []}
    peaks: dict[str, int] = {}
    for _ in range(arguments.rounds):
        for kind in times:
            seconds, peak = _timed(kind, store, work)
            times[kind].append(seconds)
            peaks[kind] = max(peaks.get(kind, 0), peak)
    ours, theirs = (statistics.median(times[k]) for k in ("arena_core", "reference"))
    print(f"reprice {arguments.runs:,} stored runs: arena-core {ours:.2f} s ({peaks['arena_core'] / 1024:.0f} MB), "
          f"reference {theirs:.2f} s ({peaks['reference'] / 1024:.0f} MB): {ours / theirs:.2f}x")  # fmt: skip
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
