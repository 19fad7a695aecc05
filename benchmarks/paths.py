"""The paths users take, each against a reference measured in the same run (sections 5-7 of
``benchmarks/run.py``):

  5. the command line end to end on a generated JSON Lines file: ``arena score -o`` and
     ``arena leaderboard``, wall time and peak memory of the command, against pyarrow reading the
     same file into a table (or orjson decoding it line by line, without pyarrow);
  6. ``arena_core.compare`` of two profiles on a list of dicts, against one scoring of the same
     dicts by the NumPy reference (``benchmarks/reference.py``);
  7. the pipeline: batches of submissions into a SQLite store, each batch's latency as the store
     grows, the last batches against the first (and a batch against ``evaluate_many`` on it alone).
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _measured(command: list[str]) -> tuple[float, float]:
    """(wall seconds, peak MiB) of ``command``, run by a fresh interpreter of its own so that the
    peak is that command's alone."""
    probe = (
        "import resource, subprocess, sys, time; start = time.perf_counter(); "
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
        "print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)"
    )
    out = subprocess.run([sys.executable, "-c", probe, *command], check=True, capture_output=True, text=True)
    seconds, mib = out.stdout.split()
    return float(seconds), float(mib)


def _write_arena(folder: Path, tasks: int, per_task: int) -> tuple[Path, Path]:
    from arena_core.examples.synthetic import generate_arena

    task_list, subs = generate_arena(tasks=tasks, submissions_per_task=per_task, seed=1)
    runs, task_file = folder / "runs.jsonl", folder / "tasks.json"
    with runs.open("w") as fh:
        fh.writelines(json.dumps(s) + "\n" for s in subs)
    task_file.write_text(json.dumps(task_list))
    return runs, task_file


def command_line(tasks: int, per_task: int) -> None:
    arena = [sys.executable, "-m", "arena_core"]
    with tempfile.TemporaryDirectory() as folder:
        runs, task_file = _write_arena(Path(folder), tasks, per_task)
        size = runs.stat().st_size
        try:
            import pyarrow  # noqa: F401

            reader = "import pyarrow.json, sys; pyarrow.json.read_json(sys.argv[1])"
            what = "pyarrow reading the file"
        except ImportError:
            reader = "import orjson, sys; [orjson.loads(line) for line in open(sys.argv[1], 'rb')]"
            what = "orjson decoding the file (pyarrow is not installed)"
        read = _measured([sys.executable, "-c", reader, str(runs)])
        score = _measured([*arena, "score", str(runs), "--tasks", str(task_file), "-q", "-o", f"{folder}/out.jsonl"])
        board = _measured([*arena, "leaderboard", str(runs), "--tasks", str(task_file), "-q"])
    print(f"5. the command line on a {tasks * per_task:,}-line JSON Lines file ({size / 1e6:,.1f} MB)")
    print(f"   reference: {what}: {read[0]:.2f} s, {read[1]:,.0f} MiB")
    for name, (seconds, mib) in (("arena score -o out.jsonl", score), ("arena leaderboard", board)):
        print(
            f"   {name:<25} {seconds:6.2f} s = {seconds / read[0]:4.1f}x the reference (target < 10 s)   "
            f"peak {mib:,.0f} MiB (target < 1,536 MiB)"
        )


def child_compare(tasks: int, per_task: int, which: str) -> None:
    """In a fresh process: the dicts, then ``compare`` (or the reference scoring) on them."""
    from arena_core.compare import compare
    from arena_core.config.files import load_config
    from arena_core.examples.synthetic import generate_columns

    sys.path.insert(0, str(HERE))
    from reference import score_records
    from run import _as_records

    columns, task_map = generate_columns(tasks=tasks, submissions_per_task=per_task, seed=11)
    records = _as_records(columns)
    del columns
    config = load_config(None)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if which == "compare":
        compare(records, task_map, config.profile("default"), config.profile("log-tokens"), autoload=False)
    else:
        score_records(records)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "extra_mib": (peak - before) / 1024, "peak_mib": peak / 1024}))


def comparing(tasks: int, per_task: int) -> None:
    def child(which: str) -> dict[str, Any]:
        out = subprocess.run(
            [sys.executable, str(HERE / "run.py"), "--child", "compare", str(tasks), str(per_task), which],
            check=True,
            capture_output=True,
            text=True,
        )
        return dict(json.loads(out.stdout))

    ours, reference = child("compare"), child("reference")
    print(f"6. compare of two profiles (default, log-tokens) on {tasks * per_task:,} dicts over {tasks:,} tasks")
    print(
        f"   {ours['seconds']:.2f} s (target < 10 s) = {ours['seconds'] / reference['seconds']:.1f}x one NumPy "
        f"reference scoring ({reference['seconds']:.2f} s); peak {ours['peak_mib']:,.0f} MiB, "
        f"{ours['extra_mib']:,.0f} MiB above the dicts"
    )


def pipeline(batches: int, size: int, tasks: int) -> None:
    from arena_core import Arena
    from arena_core.examples.synthetic import generate_arena
    from arena_core.store import SQLiteStore

    task_list, subs = generate_arena(tasks=tasks, submissions_per_task=batches * size // tasks, seed=3)
    task_map = {t["id"]: t for t in task_list}
    subs.sort(key=lambda s: (s["id"].rsplit("/", 1)[1], s["task_id"]))  # each batch spans the tasks
    arena = Arena(autoload=False)
    latencies = []
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "arena.db")
        arena.process([], store=store, tasks=task_map)
        for number in range(batches):
            batch = subs[number * size : (number + 1) * size]
            start = time.perf_counter()
            arena.process(batch, store=store)
            latencies.append(time.perf_counter() - start)
    alone = min(_timed(lambda: arena.evaluate_many(subs[:size], task_map)) for _ in range(3))
    first, last = statistics.median(latencies[:3]), statistics.median(latencies[-3:])
    print(f"7. the pipeline: {batches} batches of {size} into SQLite over {tasks} tasks")
    print("   batch latency, ms: " + " ".join(f"{t * 1000:.0f}" for t in latencies))
    print(
        f"   last three / first three (medians): {last / first:.2f}x (target <= 1.5x); a batch costs "
        f"{first / alone:.1f}x evaluate_many on it alone ({alone * 1000:.0f} ms)"
    )


def _timed(work: Any) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start
