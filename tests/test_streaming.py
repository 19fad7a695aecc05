"""Runs past memory: ``arena leaderboard`` and ``arena score`` stream a Parquet input a partition of
whole tasks at a time, and give what reading it whole gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from clirun import run_arena
from pagefaults import FAULTS

pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

from arena_core.examples.synthetic import generate_arena  # noqa: E402
from arena_core.io.decoding import InputError  # noqa: E402
from arena_core.io.pieces import open_source  # noqa: E402
from arena_core.io.planning import plan, task_counts  # noqa: E402

ENV = {**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"}
TASKS, ROWS = generate_arena(tasks=24, submissions_per_task=30, seed=8)


def arena(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return run_arena(*args, cwd=cwd)


def write(folder: Path, rows: list[dict], *, group: int = 60, name: str = "runs.parquet") -> Path:
    """The runs as Parquet (row groups of ``group`` runs), the tasks, and a configuration that
    streams anything over 100 runs."""
    keys = list(dict.fromkeys(k for r in rows for k in r if k != "meta"))
    path = folder / name
    pq.write_table(pa.table({k: [r.get(k) for r in rows] for k in keys}), path, row_group_size=group)
    (folder / "tasks.json").write_text(json.dumps(TASKS))
    (folder / "small.toml").write_text("partition_rows = 100\n")
    return path


def both(folder: Path, *args: str) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """(the command streamed, the command reading the input whole)."""
    streamed = arena(folder, "-c", "small.toml", *args, "--tasks", "tasks.json")
    whole = arena(folder, *args, "--tasks", "tasks.json")
    return streamed, whole


def test_a_streamed_leaderboard_is_the_board_of_the_whole_input(tmp_path: Path) -> None:
    write(tmp_path, ROWS)
    for options in ([], ["--by", "model", "--pairwise", "--method", "win_rate"]):
        streamed, whole = both(tmp_path, "leaderboard", "runs.parquet", *options)
        assert streamed.returncode == 0, streamed.stderr
        assert "streaming 720 runs from 1 file(s)" in streamed.stderr  # the path was taken ...
        assert "streaming" not in whole.stderr  # ... and only there
        assert streamed.stdout == whole.stdout and len(streamed.stdout.splitlines()) > 5
    # Options that need every run keep the input whole, with the same board.
    pooled = arena(tmp_path, "-c", "small.toml", "leaderboard", "runs.parquet", "--tasks", "tasks.json", "--pool", "runs")
    assert pooled.returncode == 0 and "streaming" not in pooled.stderr


def test_the_input_is_cut_between_tasks_into_bounded_partitions(tmp_path: Path) -> None:
    write(tmp_path, ROWS, group=45)  # row groups of 45 runs: tasks of 30 straddle them
    source = open_source([tmp_path / "runs.parquet"])
    parts, spilled = plan(source, task_counts(source), 100)
    assert spilled is None  # a task straddles two row groups but no partition's cut
    assert [p.rows for p in parts] == [90] * 8 and all(len(p.tasks) == 3 and not p.filtered for p in parts)
    assert sorted(t for p in parts for t in p.tasks) == sorted(t["id"] for t in TASKS)
    # Cut where row groups begin, here between tasks too: each partition reads its two whole.
    assert all(p.skip == 0 and p.head is None and len(p.pieces) == 2 for p in parts)
    # A cut inside a row group (a limit below one): each partition reads the stretch of its tasks,
    # decoding its first row group from the start and its last only as far as its rows go; a
    # task larger than the limit is a partition of its own.
    parts, spilled = plan(source, task_counts(source), 20)
    assert spilled is None and len(parts) == 24 and all(len(p.tasks) == 1 and p.rows == 30 for p in parts)
    decoded = [sum(r.rows for r in p.pieces[:-1]) + (p.head or p.pieces[-1].rows) for p in parts]
    assert not any(p.filtered for p in parts) and decoded == [p.skip + p.rows for p in parts]
    assert [p.skip for p in parts[:4]] == [0, 30, 15, 0] and sum(decoded) < 2 * 720
    (tmp_path / "tiny.toml").write_text("partition_rows = 20\n")
    streamed = arena(tmp_path, "-c", "tiny.toml", "leaderboard", "runs.parquet", "--tasks", "tasks.json")
    whole = arena(tmp_path, "leaderboard", "runs.parquet", "--tasks", "tasks.json")
    assert "streaming" in streamed.stderr and streamed.stdout == whole.stdout and streamed.returncode == 0
    for config, out in (("tiny.toml", "s.parquet"), ("/dev/null", "w.parquet")):
        arena(tmp_path, "-c", config, "score", "runs.parquet", "--tasks", "tasks.json", "--format", "parquet", "-o", out)
    assert pq.read_table(tmp_path / "s.parquet").equals(pq.read_table(tmp_path / "w.parquet"))  # every run, in order
    # Tasks together but not each in one run of rows (two at a time, alternating): a partition
    # reads the row groups its tasks span and keeps its tasks' rows, wherever they lie.
    by_task = [[r for r in ROWS if r["task_id"] == t["id"]] for t in TASKS]
    alternating = [r for a, b in zip(by_task[::2], by_task[1::2], strict=True) for pair in zip(a, b, strict=True) for r in pair]
    write(tmp_path, alternating, group=45, name="alternating.parquet")
    source = open_source([tmp_path / "alternating.parquet"])
    parts, spilled = plan(source, task_counts(source), 100)
    assert spilled is None and not task_counts(source).clustered and any(p.filtered for p in parts)
    streamed = arena(tmp_path, "-c", "small.toml", "leaderboard", "alternating.parquet", "--tasks", "tasks.json")
    whole = arena(tmp_path, "leaderboard", "alternating.parquet", "--tasks", "tasks.json")
    assert "streaming" in streamed.stderr and streamed.stdout == whole.stdout and streamed.returncode == 0
    # Runs in any order: the rows are dealt to partitions (spilled), whole tasks, none over the limit.
    shuffled = [ROWS[i] for i in np.random.default_rng(3).permutation(len(ROWS))]
    write(tmp_path, shuffled, name="shuffled.parquet")
    source = open_source([tmp_path / "shuffled.parquet"])
    parts, spilled = plan(source, task_counts(source), 100)
    assert spilled is not None and max(p.rows for p in parts) <= 100 and sum(p.rows for p in parts) == 720
    assert sorted(spilled) == sorted(t["id"] for t in TASKS)


def test_tasks_are_cut_into_partitions_of_about_equal_size_for_every_lane(tmp_path: Path) -> None:
    """Partitions of about equal runs (within a row group and a task or two: they are cut where
    row groups begin), as many as a multiple of the lanes scoring them, so none is left scoring
    the last one alone; none over the limit; uneven tasks fall back to gathering."""
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 40, 60)
    rows = [{"id": f"r{t}-{i}", "task_id": f"t{t:02d}", "tool": "x"} for t, n in enumerate(sizes) for i in range(n)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "runs.parquet", row_group_size=50)
    source = open_source([tmp_path / "runs.parquet"])
    total = int(sizes.sum())
    for limit in (100, 250, 400):
        for lanes in (1, 2, 3):
            parts, spilled = plan(source, task_counts(source), limit, lanes)
            loads = [p.rows for p in parts]
            assert spilled is None and sum(loads) == total and max(loads) <= limit
            assert len(parts) % lanes == 0 and len(parts) >= -(-total // limit)
            assert max(loads) - min(loads) <= 2 * int(sizes.max()) + 50  # about equal: within a row group and a task or two
            cut = [t for p in parts for t in p.tasks]
            assert cut == [f"t{t:02d}" for t in range(60)]  # whole tasks, in order
    # 20 tasks of 10 runs and a limit of 100: 2 partitions for 2 lanes, 3 equal ones for 3
    # (gathering up to the limit would leave the third lane idle).
    even = [{"id": f"e{t}-{i}", "task_id": f"e{t}", "tool": "x"} for t in range(20) for i in range(10)]
    pq.write_table(pa.Table.from_pylist(even), tmp_path / "even.parquet", row_group_size=10)
    source = open_source([tmp_path / "even.parquet"])
    assert [p.rows for p in plan(source, task_counts(source), 100, 2)[0]] == [100, 100]
    assert [p.rows for p in plan(source, task_counts(source), 100, 3)[0]] == [70, 60, 70]
    # One task of most of the runs: a partition of its own; the rest gathered up to the limit.
    lopsided = [{"id": f"l{i}", "task_id": "a" if i < 20 else "big" if i < 320 else "z", "tool": "x"} for i in range(340)]
    pq.write_table(pa.Table.from_pylist(lopsided), tmp_path / "lopsided.parquet", row_group_size=20)
    source = open_source([tmp_path / "lopsided.parquet"])
    parts, _ = plan(source, task_counts(source), 100, 2)
    assert [(p.tasks, p.rows) for p in parts] == [(("a",), 20), (("big",), 300), (("z",), 20)]


def test_the_command_scores_partitions_beside_its_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With one worker, the command's own process scores partitions too (its Arena is built),
    and the result is the board of the whole input; on one core no worker is started at all."""
    from datetime import UTC, datetime

    from arena_core import Arena, streaming
    from arena_core.model.records import Task
    from arena_core.model.serde import structure

    write(tmp_path, ROWS)
    arena, tasks = Arena(autoload=False), {t["id"]: structure(t, Task) for t in TASKS}
    stamp = datetime.now(UTC).isoformat()
    whole = [(r.group, r.n_runs, r.score) for r in arena.leaderboard(arena.evaluate_many(ROWS, tasks, evaluated_at=stamp))]
    here: list[int] = []
    scored = streaming._score
    monkeypatch.setattr(streaming, "_score", lambda a, job: here.append(job.part.rows) or scored(a, job))
    for cores, workers in ((2, 1), (1, 0)):
        here.clear()
        monkeypatch.setattr(streaming, "_cores", lambda cores=cores: cores)
        lanes = streaming._lanes(arena)
        assert lanes.count == workers and lanes.local and (lanes.workers is None) == (workers == 0)
        if lanes.workers is not None:
            lanes.workers.shutdown()
        found = streaming.stream(arena, open_source([tmp_path / "runs.parquet"]), tasks, by="tool", stamp=stamp, limit=60)
        assert found.partitions == 12 and found.table is not None
        assert [(r.group, r.n_runs, r.score) for r in arena.leaderboard(found.table)] == whole
        # Partitions scored here, not in the worker (which has its own copy of the module).
        assert (0 < len(here) < 12) if workers else len(here) == 12


_CYCLES = FAULTS + """
import sys
from arena_core.io.allocator import keep_freed_arrays
kept = sys.argv[1] == "kept" and keep_freed_arrays()
print(kept, faults())
"""


def test_scoring_processes_keep_freed_arrays_for_the_next_partition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Arrays freed by one partition are reused by the next rather than faulted in again: five
    cycles of twenty 4 MiB arrays take about 50,000 page faults as glibc allocates by default
    and none once told to keep freed blocks (the command does, when it scores partitions; its
    workers too: tests/test_executors.py)."""
    from click.testing import CliRunner

    import arena_core.cli.streams as streams
    from arena_core.cli import main

    runs = {}
    for mode in ("plain", "kept"):
        done = subprocess.run([sys.executable, "-c", _CYCLES, mode], capture_output=True, text=True, check=True)
        applied, faults = done.stdout.split()
        runs[mode] = (applied == "True", int(faults))
    if not runs["kept"][0]:
        pytest.skip("this C library has no mallopt (not glibc): it allocates as it does")
    assert runs["plain"][1] > 20_000 and runs["kept"][1] < runs["plain"][1] // 20, runs
    calls: list[int] = []
    monkeypatch.setattr(streams, "keep_freed_arrays", lambda: calls.append(1) or True)
    write(tmp_path, ROWS)
    monkeypatch.chdir(tmp_path)
    for config, expected in (("small.toml", [1]), (None, [1])):  # streamed, then read whole (no call)
        options = ["-c", config] if config else []
        board = CliRunner().invoke(main, [*options, "leaderboard", "runs.parquet", "--tasks", "tasks.json", "-q"])
        assert board.exit_code == 0, board.output
        assert calls == expected
    import arena_core.io.allocator as allocator
    from arena_core.io.allocator import keep_freed_arrays

    told: list[int] = []  # a setting the environment gives (the caller's own) is left to it when asked
    monkeypatch.setattr(allocator.ctypes, "CDLL", lambda _: type("C", (), {"mallopt": lambda p, v: told.append(p) or 1}))
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    assert keep_freed_arrays(unless_set=True) and told == [-3]  # M_MMAP_THRESHOLD only
    assert keep_freed_arrays() and told == [-3, -3, -1]
    monkeypatch.setattr(sys, "platform", "win32")  # no glibc to tell: nothing is done, nothing fails
    assert keep_freed_arrays() is False


def test_a_partition_keeps_its_own_tasks_rows_whether_they_are_together_or_not() -> None:
    from arena_core.io.pieces import rows_of_tasks

    table = pa.table({"task_id": ["a", "b", "b", "c", "b", None, "a"], "n": list(range(7))})
    # Consecutive rows are a slice of the table (nothing copied) ...
    kept = rows_of_tasks(table.slice(1, 3), ["b"])
    assert kept["n"].to_pylist() == [1, 2] and kept["n"].chunk(0).offset == 1
    # ... rows spread out are taken, in input order; a run without a task is kept by the
    # partition that holds ``None``.
    assert rows_of_tasks(table, ["b"])["n"].to_pylist() == [1, 2, 4]
    assert rows_of_tasks(table, ["a", None])["n"].to_pylist() == [0, 5, 6]
    assert rows_of_tasks(table, ["z"]).num_rows == 0


def test_an_ids_hash_depends_on_the_id_alone() -> None:
    """Equal ids hash alike wherever they sit (another array, an offset, another chunk, next to
    longer or shorter neighbours, or among ids of their own length only, which are hashed as a
    table of words); distinct ids of every length up to 40 bytes do not collide."""
    from arena_core.io.ids import id_hashes

    rng = np.random.default_rng(4)
    ids = ["", "a", "abcdefgh", "abcdefghi", "abcdefgh\x00", "é" * 20, *(f"run-{i}" for i in range(3000))]
    ids += ["".join(rng.choice(list("ab\x00é"), size=k)) for k in rng.integers(0, 40, 20_000)]
    ids = list(dict.fromkeys(ids))
    hashes = id_hashes(pa.array(ids))
    assert len(np.unique(hashes)) == len(ids)
    shuffled = rng.permutation(len(ids))
    moved = id_hashes(pa.chunked_array([pa.array([ids[i] for i in shuffled[:7]]), pa.array([ids[i] for i in shuffled[7:]])]))
    assert (moved == hashes[shuffled]).all()
    assert (id_hashes(pa.array(["x", *ids]).slice(1)) == hashes).all()
    assert (id_hashes(pa.array(ids, pa.large_string())) == hashes).all()
    assert id_hashes(pa.array(["a", None]))[1] == 0
    sizes = np.array([len(i.encode()) for i in ids])
    for size in (0, 1, 7, 8, 9, 17, 39):
        alike = np.flatnonzero(sizes == size)
        assert len(alike) and (id_hashes(pa.array([ids[i] for i in alike])) == hashes[alike]).all()
        assert (id_hashes(pa.array(["x", *(ids[i] for i in alike)]).slice(1)) == hashes[alike]).all()


def test_streaming_never_imports_pandas_in_the_command_or_its_workers(tmp_path: Path) -> None:
    """pyarrow imports pandas (when installed, as here) to convert Python or NumPy values: 0.45 s
    in the command and in each worker. Every process records what it imported (a worker forked
    from the command records it was, and keeps the command's watch)."""
    write(tmp_path, ROWS)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(
        "import os, sys\n"
        "log = os.environ['IMPORTED_LOG']\n"
        "open(log, 'a').write(f'start {os.getpid()}\\n')\n"
        "os.register_at_fork(after_in_child=lambda: open(log, 'a').write(f'fork {os.getpid()}\\n'))\n"
        "class Watch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'pandas':\n"
        "            open(log, 'a').write(f'pandas {os.getpid()}\\n')\n"
        "sys.meta_path.insert(0, Watch())\n"
    )
    log = tmp_path / "imported.log"
    env = {**ENV, "PYTHONPATH": str(hooks), "IMPORTED_LOG": str(log)}
    command = [sys.executable, "-m", "arena_core", "-c", "small.toml", "leaderboard", "runs.parquet", "--tasks", "tasks.json"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert done.returncode == 0 and "scored 720 runs in 12 partition(s)" in done.stderr, done.stderr
    events = [line.split()[0] for line in log.read_text().splitlines()]
    assert events[0] == "start" and events.count("fork") >= 1  # the command, and its workers forked from it
    assert "pandas" not in events
    # Scores written to Parquet too.
    log.unlink()
    command = [*command[:5], "score", "runs.parquet", "--tasks", "tasks.json", "--format", "parquet", "-o", "out.parquet"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert done.returncode == 0 and pq.read_table(tmp_path / "out.parquet").num_rows == 720, done.stderr
    events = [line.split()[0] for line in log.read_text().splitlines()]
    assert events[0] == "start" and events.count("fork") >= 1 and "pandas" not in events


def test_a_quoted_glob_of_shards_is_its_files(tmp_path: Path) -> None:
    for k in range(3):  # three shards of 8 tasks each
        write(tmp_path, ROWS[k * 240 : (k + 1) * 240], name=f"part-{k}.parquet")
    write(tmp_path, ROWS)
    streamed = arena(tmp_path, "-c", "small.toml", "leaderboard", "part-*.parquet", "--tasks", "tasks.json")
    whole = arena(tmp_path, "leaderboard", "part-*.parquet", "--tasks", "tasks.json")  # read whole: the same files
    single = arena(tmp_path, "leaderboard", "runs.parquet", "--tasks", "tasks.json")
    assert "streaming 720 runs from 3 file(s)" in streamed.stderr
    assert streamed.stdout == whole.stdout == single.stdout and whole.returncode == 0
    nothing = arena(tmp_path, "leaderboard", "nothing-*.parquet", "--tasks", "tasks.json")
    assert nothing.returncode == 2 and "nothing-*.parquet: no file matches" in nothing.stderr


def test_runs_in_any_order_are_spilled_and_scored_as_a_whole(tmp_path: Path) -> None:
    shuffled = [ROWS[i] for i in np.random.default_rng(5).permutation(len(ROWS))]
    write(tmp_path, shuffled)
    streamed, whole = both(tmp_path, "leaderboard", "runs.parquet", "--format", "json")
    assert "streaming 720 runs" in streamed.stderr and streamed.stdout == whole.stdout
    streamed, whole = both(tmp_path, "score", "runs.parquet", "--format", "parquet", "-o", "s.parquet")
    assert streamed.returncode == 0, streamed.stderr
    stream_table = pq.read_table(tmp_path / "s.parquet")
    arena(tmp_path, "score", "runs.parquet", "--tasks", "tasks.json", "--format", "parquet", "-o", "w.parquet")
    whole_table = pq.read_table(tmp_path / "w.parquet")
    order = lambda t: t.sort_by("submission_id")  # noqa: E731  # partitions: not input order when spilled
    assert order(stream_table).equals(order(whole_table)) and stream_table.num_rows == 720


def test_streamed_scores_equal_the_scores_of_the_whole_input(tmp_path: Path) -> None:
    write(tmp_path, ROWS)
    for out in ("s.parquet", "w.parquet"):
        config = ["-c", "small.toml"] if out == "s.parquet" else []
        done = arena(tmp_path, *config, "score", "runs.parquet", "--tasks", "tasks.json", "--format", "parquet", "-o", out)
        assert done.returncode == 0, done.stderr
    assert pq.read_table(tmp_path / "s.parquet").equals(pq.read_table(tmp_path / "w.parquet"))  # input order kept
    streamed, whole = both(tmp_path, "score", "runs.parquet")  # JSON Lines to stdout
    drop = lambda text: [{k: v for k, v in json.loads(line).items() if k != "evaluated_at"} for line in text.splitlines()]  # noqa: E731
    assert drop(streamed.stdout) == drop(whole.stdout) and len(streamed.stdout.splitlines()) == 720
    # A folder: one file per partition, together the same evaluations.
    sharded = arena(tmp_path, "-c", "small.toml", "score", "runs.parquet", "--tasks", "tasks.json",
                    "--format", "parquet", "-o", "out/")  # fmt: skip
    assert sharded.returncode == 0, sharded.stderr
    shards = sorted((tmp_path / "out").iterdir())
    assert [s.name for s in shards] == [f"part-{k:05d}.parquet" for k in range(12)]  # a row group of 60 runs each
    assert pa.concat_tables([pq.read_table(s) for s in shards]).equals(pq.read_table(tmp_path / "w.parquet"))
    again = arena(tmp_path, "-c", "small.toml", "score", "runs.parquet", "--tasks", "tasks.json", "--format", "parquet", "-o", "out")
    assert again.returncode == 2 and "a folder that is not empty" in again.stderr


def test_bad_records_are_reported_as_the_whole_input_reports_them(tmp_path: Path) -> None:
    rows = [dict(r) for r in ROWS]
    rows[700]["total_tokens"] = -5  # in the last partition
    rows[10]["iterations"] = 0  # in the first
    write(tmp_path, rows)
    streamed, whole = both(tmp_path, "score", "runs.parquet", "--format", "parquet", "-o", "out.parquet")
    assert streamed.returncode == whole.returncode == 2
    assert streamed.stderr.splitlines()[1:] == whole.stderr.splitlines()  # after the streaming note
    assert "runs.parquet: record 11: submission" in whole.stderr and "record 701" in whole.stderr
    assert not (tmp_path / "out.parquet").exists()  # nothing written, not even its unfinished file
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.parquet")]
    # An id used twice, in two partitions: refused, naming both places, as a whole read does.
    rows = [dict(r) for r in ROWS]
    rows[650]["id"] = rows[5]["id"]
    write(tmp_path, rows)
    streamed, whole = both(tmp_path, "leaderboard", "runs.parquet")
    assert streamed.returncode == whole.returncode == 2
    assert "id: expected an id used once, also used at runs.parquet: record 6" in whole.stderr
    assert streamed.stderr.splitlines()[1:] == whole.stderr.splitlines()
    # A run of a task the tasks file lacks: the error names every task given, not its partition's.
    rows = [dict(r) for r in ROWS]
    rows[400]["task_id"] = "no-such-task"
    write(tmp_path, rows)
    streamed, whole = both(tmp_path, "leaderboard", "runs.parquet")
    assert streamed.returncode == whole.returncode == 2 and "got 'no-such-task'" in whole.stderr
    assert streamed.stderr.splitlines()[1:] == whole.stderr.splitlines() and TASKS[-1]["id"] in streamed.stderr
    # Scores are written beside the output while the partitions are scored: its folder must be there.
    write(tmp_path, ROWS)
    gone = arena(tmp_path, "-c", "small.toml", "score", "runs.parquet", "--tasks", "tasks.json", "--format",
                 "parquet", "-o", "no-such-folder/out.parquet")  # fmt: skip
    assert gone.returncode == 2 and "no-such-folder/out.parquet: cannot write" in gone.stderr, gone.stderr
    assert "Traceback" not in gone.stderr


def test_hostile_run_labels_read_coded_are_refused_as_the_whole_input_refuses_them(tmp_path: Path) -> None:
    """Tasks and tools are read as Parquet's dictionaries when streamed: a blank tool, a tool
    with a control character or over the length limit beside good runs is still reported by its
    record, as reading the file whole reports it; a task id whose bytes are not UTF-8 is refused
    before it is coded."""
    rows = [dict(r) for r in ROWS]
    for at, bad in ((500, "   "), (560, "tool\x07"), (620, "t" * 1001)):
        rows[at]["tool"] = bad  # in later partitions, beside good runs
    write(tmp_path, rows)
    streamed, whole = both(tmp_path, "leaderboard", "runs.parquet")
    assert streamed.returncode == whole.returncode == 2, streamed.stderr
    for record in (501, 561, 621):
        assert f"runs.parquet: record {record}: submission" in whole.stderr and "tool" in whole.stderr
    assert streamed.stderr.splitlines()[1:] == whole.stderr.splitlines()
    keys = [k for k in ROWS[0] if k != "meta"]
    table = pa.table({k: [r.get(k) for r in ROWS] for k in keys})
    tasks = table["task_id"].combine_chunks().cast(pa.binary())
    raw = [tasks[i].as_py() for i in range(len(tasks))]
    raw[400] = b"task-\xff"  # not UTF-8: a string column built from its bytes, unchecked
    offsets = np.cumsum([0] + [len(b) for b in raw]).astype(np.int32)
    hostile = pa.Array.from_buffers(pa.string(), len(raw), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(raw))])
    pq.write_table(table.set_column(keys.index("task_id"), "task_id", hostile), tmp_path / "runs.parquet", row_group_size=60)
    streamed, _ = both(tmp_path, "leaderboard", "runs.parquet")
    assert streamed.returncode == 2 and "runs.parquet: not a readable Parquet file" in streamed.stderr, streamed.stderr
    assert "utf-8" in streamed.stderr.lower() or "utf8" in streamed.stderr.lower()
    # The same bytes as a name in a list of files, or as an id: refused alike.
    files = pa.ListArray.from_arrays(pa.array(np.arange(len(raw) + 1, dtype=np.int32)), hostile)
    for name, column in (("files_created", files), ("id", hostile)):
        pq.write_table(table.set_column(keys.index(name), name, column), tmp_path / "runs.parquet", row_group_size=60)
        streamed, _ = both(tmp_path, "leaderboard", "runs.parquet")
        assert streamed.returncode == 2 and "not a readable Parquet file" in streamed.stderr, (name, streamed.stderr)


def test_a_hive_dataset_streams_and_a_link_in_it_is_refused(tmp_path: Path) -> None:
    keys = sorted({k for r in ROWS for k in r} - {"task_id", "meta"})
    by_task: dict[str, list[dict]] = {}
    for row in ROWS:
        by_task.setdefault(row["task_id"], []).append(row)
    for task, rows in by_task.items():
        folder = tmp_path / "runs" / f"task_id={task}"
        folder.mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist([{k: r.get(k) for k in keys} for r in rows]), folder / "part-0.parquet")
    write(tmp_path, ROWS)  # the tasks and the configuration
    streamed, whole = both(tmp_path, "leaderboard", "runs", "--format", "json")
    assert "streaming 720 runs from 24 file(s)" in streamed.stderr
    assert streamed.stdout == whole.stdout
    board = whole.stdout
    # Its scores as a folder keep its partitioning: one task_id=T folder per task.
    done = arena(tmp_path, "-c", "small.toml", "score", "runs", "--tasks", "tasks.json", "--format", "parquet", "-o", "scores/")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "scores").iterdir()) == sorted(f"task_id={t}" for t in by_task)
    import pyarrow.dataset as ds

    scores = ds.dataset(tmp_path / "scores", format="parquet", partitioning="hive").to_table()
    assert scores.num_rows == 720 and sorted(scores["submission_id"].to_pylist()) == sorted(r["id"] for r in ROWS)
    owner = dict(zip(scores["submission_id"].to_pylist(), scores["task_id"].to_pylist(), strict=True))
    assert all(owner[r["id"]] == r["task_id"] for r in ROWS)
    # A quoted glob over the dataset reads the task_id=T folders below where it starts as keys.
    for given in ("runs/*/part-*.parquet", "runs/**/*.parquet"):
        streamed, whole = both(tmp_path, "leaderboard", given, "--format", "json")
        assert "streaming 720 runs from 24 file(s)" in streamed.stderr and streamed.stdout == whole.stdout == board
    secret = tmp_path / "secret.parquet"
    pq.write_table(pa.table({"id": ["x"]}), secret)
    (tmp_path / "runs" / "task_id=zz").mkdir()
    (tmp_path / "runs" / "task_id=zz" / "part-0.parquet").symlink_to(secret)
    with pytest.raises(InputError, match="a link"):
        open_source([tmp_path / "runs"])
    refused = arena(tmp_path, "-c", "small.toml", "leaderboard", "runs", "--tasks", "tasks.json")
    assert refused.returncode == 2 and "a link" in refused.stderr
    for config in ("small.toml", "/dev/null"):  # streamed, or read whole: a glob refuses it too
        refused = arena(tmp_path, "-c", config, "leaderboard", "runs/*/part-0.parquet", "--tasks", "tasks.json")
        assert refused.returncode == 2 and "task_id=zz/part-0.parquet: a link" in refused.stderr, refused.stderr


def test_streamed_partitions_score_on_a_dask_cluster_as_here(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    write(tmp_path, ROWS)
    (tmp_path / "dask.toml").write_text("partition_rows = 100\ncheck_concurrency = 2\n")
    on_dask = arena(tmp_path, "-c", "dask.toml", "leaderboard", "runs.parquet", "--tasks", "tasks.json", "--format", "json",
                    "--executor", "dask")  # fmt: skip
    here = arena(tmp_path, "leaderboard", "runs.parquet", "--tasks", "tasks.json", "--format", "json")
    assert on_dask.returncode == 0, on_dask.stderr
    assert "streaming 720 runs" in on_dask.stderr and on_dask.stdout == here.stdout
    # Scores to one file: each partition's table comes back with its outcome (no shared folder).
    scored = arena(tmp_path, "-c", "dask.toml", "score", "runs.parquet", "--tasks", "tasks.json", "--format", "parquet",
                   "-o", "dask.parquet", "--executor", "dask")  # fmt: skip
    assert scored.returncode == 0 and "streaming 720 runs" in scored.stderr, scored.stderr
    whole = arena(tmp_path, "score", "runs.parquet", "--tasks", "tasks.json", "--format", "parquet", "-o", "w.parquet")
    assert whole.returncode == 0 and pq.read_table(tmp_path / "dask.parquet").equals(pq.read_table(tmp_path / "w.parquet"))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this system")
def test_workers_are_counted_from_the_cores_the_command_may_use() -> None:
    """A command confined to one core (as a container's cpuset or taskset confines it) starts no
    worker, however many cores the host has."""
    code = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); from arena_core import streaming; print(streaming._cores())"
    confined = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV)
    assert confined.returncode == 0 and confined.stdout.strip() == "1", confined.stderr
    from arena_core import streaming

    assert streaming._cores() == len(os.sched_getaffinity(0))


def test_a_workers_table_is_handed_over_in_a_file_removed_once_appended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker on this machine writes its partition's table to an Arrow file that the command
    maps; each is removed as soon as it is appended, so at most a few exist at once (they were
    all kept to the end: the whole output again, in the temporary folder)."""
    import tempfile
    from datetime import UTC, datetime

    from arena_core import Arena, streaming
    from arena_core.model.records import Task
    from arena_core.model.serde import structure

    write(tmp_path, ROWS)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(streaming, "_cores", lambda: 2)
    arena, tasks = Arena(autoload=False), {t["id"]: structure(t, Task) for t in TASKS}
    scored = streaming._score  # this process is slow: the worker scores most partitions
    monkeypatch.setattr(streaming, "_score", lambda a, job: time.sleep(0.5) or scored(a, job))
    seen: list[tuple[int, int]] = []

    def appended(table: object) -> None:
        seen.append((table.num_rows, len(list(scratch.glob("arena-stream-*/table-*.arrow")))))

    found = streaming.stream(arena, open_source([tmp_path / "runs.parquet"]), tasks, by=None,
                             stamp=datetime.now(UTC).isoformat(), on_table=appended, limit=60)  # fmt: skip
    assert found.partitions == 12 and sum(rows for rows, _ in seen) == 720
    assert max(files for _, files in seen) <= 4  # two lanes' worth ahead of the one appended
    assert sum(files > 0 for _, files in seen) >= 6  # the worker's tables came as files ...
    assert not list(scratch.rglob("*.arrow"))  # ... none left behind


@pytest.fixture(scope="module")
def s3() -> object:
    """An S3-compatible server (moto's) on loopback, and the environment that points fsspec at it."""
    pytest.importorskip("s3fs")
    server_module = pytest.importorskip("moto.server")
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    env = {**ENV, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_DEFAULT_REGION": "us-east-1", "FSSPEC_S3_ENDPOINT_URL": f"http://{host}:{port}"}  # fmt: skip
    import s3fs

    yield s3fs.S3FileSystem(endpoint_url=env["FSSPEC_S3_ENDPOINT_URL"], key="testing", secret="testing"), env
    server.stop()


def test_runs_in_object_storage_score_as_the_same_files_here(tmp_path: Path, s3: tuple) -> None:
    filesystem, env = s3
    local = write(tmp_path, ROWS)
    filesystem.mkdir("arena-tests")
    filesystem.put(str(local), "arena-tests/board/part-0.parquet")
    remote = subprocess.run(
        [sys.executable, "-m", "arena_core", "leaderboard", "s3://arena-tests/board/", "--tasks", "tasks.json",
         "--format", "json"], cwd=tmp_path, capture_output=True, text=True, env=env,
    )  # fmt: skip
    here = arena(tmp_path, "leaderboard", "runs.parquet", "--tasks", "tasks.json", "--format", "json")
    assert remote.returncode == 0, remote.stderr
    assert "streaming 720 runs from 1 file(s)" in remote.stderr and remote.stdout == here.stdout
    # The scores written as one file per partition, from the bucket.
    scored = subprocess.run(
        [sys.executable, "-m", "arena_core", "-c", "small.toml", "score", "s3://arena-tests/board/part-0.parquet",
         "--tasks", "tasks.json", "--format", "parquet", "-o", "scores/"], cwd=tmp_path, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    assert sum(pq.read_table(p).num_rows for p in (tmp_path / "scores").iterdir()) == 720
    # What a URL cannot do is said, not tried on the runs whole.
    refused = subprocess.run(
        [sys.executable, "-m", "arena_core", "leaderboard", "s3://arena-tests/board/", "--tasks", "tasks.json",
         "--by", "meta.repo"], cwd=tmp_path, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert refused.returncode == 2 and "URLs are read by the streaming path, which groups by tool or model" in refused.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "arena_core", "leaderboard", "s3://arena-tests/nothing/", "--tasks", "tasks.json"],
        cwd=tmp_path, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert missing.returncode == 2 and "s3://arena-tests/nothing/: no such file" in missing.stderr
    # A quoted glob over hive folders in the bucket: the folders below where it starts are keys.
    for task, table in _by_task(ROWS):
        with filesystem.open(f"arena-tests/hive/task_id={task}/part-0.parquet", "wb") as out:
            pq.write_table(table, out)
    globbed = subprocess.run(
        [sys.executable, "-m", "arena_core", "leaderboard", "s3://arena-tests/hive/*/part-0.parquet", "--tasks",
         "tasks.json", "--format", "json"], cwd=tmp_path, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert globbed.returncode == 0, globbed.stderr
    assert "from 24 file(s)" in globbed.stderr and globbed.stdout == here.stdout


def test_any_fsspec_filesystem_is_read_as_a_bucket_is(tmp_path: Path) -> None:
    """gs:// and hf:// go through fsspec as s3:// does; its in-memory filesystem stands in for
    them here (one partition: scored in this process, which holds the memory)."""
    fsspec = pytest.importorskip("fsspec", reason="the remote extra is not installed")
    from datetime import UTC, datetime

    from arena_core import Arena
    from arena_core.model.records import Task
    from arena_core.model.serde import structure
    from arena_core.streaming import stream

    memory = fsspec.filesystem("memory")
    for task, table in _by_task(ROWS):
        with memory.open(f"/arena-memory/runs/task_id={task}/part-0.parquet", "wb") as out:
            pq.write_table(table, out)
    local = write(tmp_path, ROWS)
    arena, tasks = Arena(autoload=False), {t["id"]: structure(t, Task) for t in TASKS}
    stamp = datetime.now(UTC).isoformat()
    boards = []
    for given in ("memory://arena-memory/runs/", "memory://arena-memory/runs/*/part-0.parquet", str(local)):
        source = open_source([given])
        assert source.rows == 720 and "task_id" in source.schema.names
        found = stream(arena, source, tasks, by="tool", stamp=stamp, limit=1000)
        assert found.table is not None and found.runs == 720
        boards.append([(r.group, r.n_runs, r.score) for r in arena.leaderboard(found.table)])
    assert boards[0] == boards[1] == boards[2] and len(boards[0]) == 5
    memory.rm("/arena-memory", recursive=True)


def _by_task(rows: list[dict]) -> list[tuple[str, object]]:
    """Each task's runs as an Arrow table without its ``task_id`` (a hive folder gives it)."""
    keys = sorted({k for r in rows for k in r} - {"task_id", "meta"})
    grouped: dict[str, list[dict]] = {}
    for row in rows:
        grouped.setdefault(row["task_id"], []).append(row)
    return [(task, pa.Table.from_pylist([{k: r.get(k) for k in keys} for r in runs])) for task, runs in grouped.items()]


def test_a_parquet_bomb_in_object_storage_is_refused_before_it_is_read(tmp_path: Path, s3: tuple) -> None:
    filesystem, env = s3
    tools = pa.array(["x" * 1_000_000] * 300, type=pa.large_string())  # 300 MB of one repeated string
    table = pa.table({"id": [f"r{i}" for i in range(300)], "task_id": ["t"] * 300, "tool": tools})
    pq.write_table(table, tmp_path / "bomb.parquet", compression="zstd", use_dictionary=False)
    del table, tools
    assert (tmp_path / "bomb.parquet").stat().st_size < 5_000_000  # what is sent: small
    filesystem.mkdir("arena-bombs")
    filesystem.put(str(tmp_path / "bomb.parquet"), "arena-bombs/runs/bomb.parquet")
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": "t", "category": "debugging"}]))
    done = subprocess.run(
        [sys.executable, "-m", "arena_core", "score", "s3://arena-bombs/runs/", "--tasks", "tasks.json"],
        cwd=tmp_path, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert done.returncode == 2 and "refused as a decompression bomb" in done.stderr
    assert "s3://arena-bombs/runs/bomb.parquet: its pages expand to" in done.stderr


def test_a_file_url_is_read_as_the_local_path_it_names(tmp_path: Path) -> None:
    write(tmp_path, ROWS)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "part-0.parquet").symlink_to(tmp_path / "runs.parquet")
    with pytest.raises(InputError, match="a link"):
        open_source([f"file://{tmp_path / 'runs'}"])  # the link check applies, as to the path
    assert open_source([f"file://{tmp_path / 'runs.parquet'}"]).rows == 720


def _example_dataset(folder: Path) -> Path:
    """The bundled example arena as a hive dataset by task (``runs/task_id=T/part-0.parquet``)."""
    from arena_core.examples import SUBMISSIONS, TASKS

    rows = [json.loads(line) for line in Path(SUBMISSIONS).read_text().splitlines()]
    keys = sorted({k for r in rows for k in r} - {"task_id", "meta"})
    for task in dict.fromkeys(r["task_id"] for r in rows):
        part = folder / "runs" / f"task_id={task}"
        part.mkdir(parents=True)
        chosen = [{k: r.get(k) for k in keys} for r in rows if r["task_id"] == task]
        pq.write_table(pa.Table.from_pylist(chosen), part / "part-0.parquet")
    (folder / "tasks.json").write_text(Path(TASKS).read_text())
    return folder / "runs"


def _page_blocks(lang: str) -> list[str]:
    import re

    page = Path(__file__).parent.parent / "docs" / "scaling.md"
    return re.findall(rf"```{lang}\n(.*?)```", page.read_text(), flags=re.S)


def test_the_scaling_page_shows_what_the_commands_print(tmp_path: Path, s3: tuple) -> None:
    from test_docs import _matches

    filesystem, env = s3
    runs = _example_dataset(tmp_path)
    (tmp_path / "stream.toml").write_text(_page_blocks("toml")[0])
    filesystem.mkdir("arena-runs")
    filesystem.put(str(runs), "arena-runs/board", recursive=True)
    whole = arena(tmp_path, "leaderboard", "--example").stdout.splitlines()
    blocks = _page_blocks("console")
    assert len(blocks) == 2
    for block in blocks:
        command, *shown = block.splitlines()
        argv = [sys.executable, "-m", "arena_core", *command.removeprefix("$ arena ").split()]
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        assert _matches(shown, done.stderr.splitlines() + done.stdout.splitlines()), (command, done.stderr)
        assert done.stdout.splitlines() == whole  # the board of the example, streamed


def test_partitions_appended_as_they_are_done_widen_to_a_column_a_later_one_brings(tmp_path: Path) -> None:
    from arena_core.cli.streams import _ParquetAppender

    first = pa.table({"submission_id": ["a", "b"], "model": pa.nulls(2), "overall_score": [1.0, 2.0]})
    later = pa.table({"submission_id": ["c"], "model": ["m"], "overall_score": [3.0], "speed_score": [50.0]})
    appender = _ParquetAppender(tmp_path / "whole.parquet")
    for table in (first, first, later, first):
        appender.add(table)
    # The third brought a column and a type the first lacked: what was written took them on.
    assert appender.schema.field("speed_score").type == pa.float64() and appender.schema.field("model").type == pa.string()
    written = pq.ParquetFile(appender.finish(tmp_path / "out.parquet"))
    assert written.num_row_groups == 4 and not list(tmp_path.glob("whole.parquet*"))  # no file left beside
    assert written.read().equals(pa.concat_tables([first, first, later, first], promote_options="default"))
    same = _ParquetAppender(tmp_path / "same.parquet")  # partitions of one schema: written as they come
    for table in (first, first):
        same.add(table)
    assert pq.read_table(same.finish()).equals(pa.concat_tables([first, first]))


def test_the_cells_order_their_runs_as_numpys_lexsort_does() -> None:
    """A cell's runs are summed in (cell, score) order, ties in input order: the one-key sort used
    for scores in hundredths gives np.lexsort's order exactly, and other scores go to lexsort."""
    from arena_core.engine.rounding import round_exact
    from arena_core.stats.tasktable import _cell_order

    rng = np.random.default_rng(12)
    cells = rng.integers(0, 300, 50_000)
    hundredths = round_exact(rng.integers(0, 10_001, 50_000) / 100.0, 2)  # many ties, 0 and 100 included
    hundredths[::7] = hundredths[::7][::-1]
    assert np.array_equal(_cell_order(cells, hundredths), np.lexsort((hundredths, cells)))
    fractions = rng.random(50_000) * 100  # not hundredths: lexsort itself
    fractions[::5] = 12.5
    assert np.array_equal(_cell_order(cells, fractions), np.lexsort((fractions, cells)))


def test_cells_sum_rounded_scores_exactly_and_others_in_score_order() -> None:
    """Hundredths (and coverage in ten-thousandths) are summed exactly: each cell's sum is the
    decimal sum of its scores, correctly rounded (Python's Decimal, independently), the same bits
    however the runs are ordered, and a table without run-level arrays takes no sort; scores
    that are not hundredths are summed in (cell, score) order."""
    from decimal import Decimal

    import arena_core.stats.tasktable as tasktable
    from arena_core.engine.rounding import round_exact
    from arena_core.stats.tasktable import Runs, TaskTable

    rng = np.random.default_rng(5)
    n = 20_000
    groups = [f"g{k}" for k in rng.integers(0, 4, n)]
    tasks = [f"t{k:03d}" for k in rng.integers(0, 60, n)]
    overall = round_exact(rng.integers(0, 10_001, n) / 100.0, 2)
    speed = round_exact(rng.random(n) * 100, 2)
    speed[rng.random(n) < 0.2] = np.nan  # left out: not counted
    coverage = round_exact(rng.choice([1.0, 0.85, 0.7, 0.6333], n), 4)
    runs = Runs([str(i) for i in range(n)], groups, tasks, overall, {"speed": speed}, coverage)
    table = TaskTable.of(runs)
    exact: dict[tuple[str, str], Decimal] = {}
    for i in range(n):
        exact[groups[i], tasks[i]] = exact.get((groups[i], tasks[i]), Decimal(0)) + Decimal(repr(float(overall[i])))
    assert all(table.sums[table.groups.index(a), table.tasks.index(b)] == float(v) for (a, b), v in exact.items())
    g, t = table.groups.index("g2"), table.tasks.index("t007")
    mine = [i for i in range(n) if groups[i] == "g2" and tasks[i] == "t007"]
    measured = [speed[i] for i in mine if not np.isnan(speed[i])]
    assert table.dimension_means["speed"][g, t] == float(sum(Decimal(repr(float(v))) for v in measured)) / len(measured)
    assert table.coverage_means[g, t] == float(sum(Decimal(repr(float(coverage[i]))) for i in mine)) / len(mine)
    shuffled = rng.permutation(n)
    again = TaskTable.of(Runs(
        [runs.ids[i] for i in shuffled], [groups[i] for i in shuffled], [tasks[i] for i in shuffled],
        overall[shuffled], {"speed": speed[shuffled]}, coverage[shuffled],
    ), cells_only=True)  # fmt: skip
    assert again.sums.tobytes() == table.sums.tobytes() and len(again.run_score) == 0
    assert all(again.dimension_means[d].tobytes() == table.dimension_means[d].tobytes() for d in ("speed",))
    assert again.coverage_means.tobytes() == table.coverage_means.tobytes()
    sorted_for = tasktable._cell_order
    try:  # exact sums and no run kept: no sort
        tasktable._cell_order = lambda *a: pytest.fail("sorted")  # type: ignore[assignment]
        TaskTable.of(runs, cells_only=True)
    finally:
        tasktable._cell_order = sorted_for
    # Scores that are not hundredths: summed by cell, then score, as np.lexsort orders them.
    raw = rng.random(n) * 100
    loose = TaskTable.of(Runs(runs.ids, groups, tasks, raw, {}, coverage), cells_only=True)
    cells = np.array([loose.groups.index(x) for x in groups]) * len(loose.tasks) + np.array([loose.tasks.index(x) for x in tasks])
    order = np.lexsort((raw, cells))
    expected = np.bincount(cells[order], weights=raw[order], minlength=loose.sums.size).reshape(loose.sums.shape)
    assert loose.sums.tobytes() == expected.tobytes()
