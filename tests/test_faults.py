"""Faults leave nothing behind: signals, a file-size limit, and several writers on one database.

These run the real command in a subprocess, because signals, resource limits and SQLite's file
locks belong to processes.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena_core.examples.synthetic import generate_arena

ENV = {**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _arena_files(directory: Path, tasks: int, per_task: int, seed: int = 3, prefix: str = "") -> tuple[Path, Path]:
    task_list, subs = generate_arena(seed=seed, tasks=tasks, submissions_per_task=per_task)
    runs = directory / f"{prefix}runs.jsonl"
    runs.write_text("".join(json.dumps({**s, "id": prefix + s["id"]}) + "\n" for s in subs))
    task_file = directory / "tasks.json"
    task_file.write_text(json.dumps(task_list))
    return runs, task_file


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena_core", *args]


def _one_line_error(stderr: str, *expected: str) -> None:
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr
    assert "Traceback" not in stderr
    for text in expected:
        assert text in lines[0], (text, lines[0])


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_while_writing_leaves_no_temporary_file(tmp_path: Path, signum: signal.Signals) -> None:
    runs, tasks = _arena_files(tmp_path, tasks=60, per_task=1000)
    out = tmp_path / "out.jsonl"
    process = subprocess.Popen(_command("score", str(runs), "--tasks", str(tasks), "-o", str(out)), cwd=tmp_path,
                               env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".out.jsonl.*")) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    assert list(tmp_path.glob(".out.jsonl.*")), "the command never started writing"
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    _one_line_error(stderr, f"stopped by {signum.name}; nothing was written")
    assert not out.exists() and not list(tmp_path.glob(".out.jsonl.*"))


def test_a_file_size_limit_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    runs, tasks = _arena_files(tmp_path, tasks=4, per_task=20)

    def limit() -> None:  # in the child: files may not grow past 20 KB
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))

    result = subprocess.run(_command("score", str(runs), "--tasks", str(tasks), "-o", "out.jsonl"), cwd=tmp_path,
                            env=ENV, capture_output=True, text=True, preexec_fn=limit)
    assert result.returncode == 2
    _one_line_error(result.stderr, "out.jsonl: cannot write: File too large")
    assert not (tmp_path / "out.jsonl").exists() and not list(tmp_path.glob(".out.jsonl.*"))


def _stored(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM submissions").fetchone()[0])


def test_three_writers_to_one_database_take_turns(tmp_path: Path) -> None:
    files = [_arena_files(tmp_path, tasks=6, per_task=40, seed=s, prefix=f"w{s}-")[0] for s in range(3)]
    tasks = tmp_path / "tasks.json"
    db = tmp_path / "arena.db"
    processes = [
        subprocess.Popen(_command("ingest", str(f), "--tasks", str(tasks), "--store", str(db)), cwd=tmp_path, env=ENV,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for f in files
    ]
    outcomes = [p.communicate(timeout=300) for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0], [err for _, err in outcomes]
    assert _stored(db) == sum(len(f.read_text().splitlines()) for f in files)


def test_a_writer_that_cannot_get_the_lock_in_time_says_so_and_changes_nothing(tmp_path: Path) -> None:
    runs, tasks = _arena_files(tmp_path, tasks=3, per_task=10)
    db = tmp_path / "arena.db"
    assert subprocess.run(_command("ingest", str(runs), "--tasks", str(tasks), "--store", str(db)), cwd=tmp_path,
                          env=ENV, capture_output=True).returncode == 0
    before = _stored(db)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer, holding the lock
    try:
        started = time.monotonic()
        result = subprocess.run(
            _command("ingest", str(runs), "--store", str(db), "--replace", "--lock-timeout", "1"),
            cwd=tmp_path, env=ENV, capture_output=True, text=True,
        )
        waited = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.returncode == 2
    _one_line_error(result.stderr, f"{db}: the database is busy", "--lock-timeout")
    assert waited >= 1.0
    assert _stored(db) == before
