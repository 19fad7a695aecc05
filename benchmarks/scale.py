"""Runs past memory: ``arena leaderboard`` and ``arena score`` on a sharded Parquet dataset, against
the same scoring written as a polars query and as DuckDB SQL, reading the same files.

    python benchmarks/scale.py                       # 1M and 10M runs over 1,000 tasks
    python benchmarks/scale.py --runs 1e6 1e7 3e7    # ... and 30M
    python benchmarks/scale.py --runs 1e5 --tasks 100 --check   # peers checked equal to arena-core

The peers compute what arena-core's default profile computes on this data: each task's baseline
(bounds of tokens, tool calls, positive time and cost; median iterations), the spec's four
scores (the efficiency composite, speed's power 0.7, neutral 50 for unmeasured time and cost,
correctness from the task's four criteria), the category's weights, the difficulty multiplier
capped at 100, rounding half to even, per-task ranks and percentiles; a leaderboard is each tool's
mean over tasks of its per-task mean with a Student-t interval. ``--check`` compares their
overall scores with arena-core's, run for run.

arena-core's modules are byte-compiled first, as installing it leaves them. Each command runs in
a fresh process, ``--repeat`` times (3 by default), the three engines taking turns so that a slow
moment of the machine falls on each of them alike; the median wall time and the largest peak
memory (the resident memory of the process and its children, summed, sampled every 20 ms) are
printed, and arena-core's median as a ratio to the faster peer's. Targets (issue 37): within
1.5x of the faster peer and under 2.5 GiB at 10M runs; 30M runs complete; time linear in runs.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WEIGHTS = {  # the spec's profiles (plugins/weights.py): efficiency, speed, cost, correctness
    "frontend_development": (0.30, 0.25, 0.15, 0.30),
    "backend_development": (0.35, 0.30, 0.20, 0.15),
    "data_analysis": (0.40, 0.20, 0.25, 0.15),
    "debugging": (0.25, 0.35, 0.15, 0.25),
    "refactoring": (0.45, 0.20, 0.20, 0.15),
}
FACTORS = {"beginner": 1.0, "intermediate": 1.1, "advanced": 1.2}
CHUNK = 1_000_000


def generate(folder: Path, runs: int, tasks: int) -> tuple[Path, Path]:
    """A folder of Parquet shards of ``runs`` runs over ``tasks`` tasks, a shard (of whole tasks)
    per million runs, written one at a time; and the tasks file."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from arena_core.examples.synthetic import generate_columns

    per_task = runs // tasks
    shard_tasks = max(1, min(tasks, CHUNK // per_task))
    out, all_tasks = folder / "runs", []
    out.mkdir()
    for shard, first in enumerate(range(0, tasks, shard_tasks)):
        count = min(shard_tasks, tasks - first)
        columns, task_map = generate_columns(tasks=count, submissions_per_task=per_task, seed=shard)
        rename = {t: f"s{shard:03d}-{t}" for t in task_map}
        columns["task_id"] = [rename[t] for t in columns["task_id"]]
        columns["id"] = [f"s{shard:03d}-{i}" for i in columns["id"]]
        columns["files_created"] = [list(f) for f in columns["files_created"]]
        for task_id, task in task_map.items():
            all_tasks.append({**task, "id": rename[task_id]})
        table = pa.table({k: pa.array(v, from_pandas=isinstance(v, np.ndarray)) for k, v in columns.items()})
        pq.write_table(table, out / f"part-{shard:05d}.parquet", row_group_size=1 << 18)
    task_file = folder / "tasks.json"
    task_file.write_text(json.dumps(all_tasks))
    return out, task_file


def _tasks_frame(task_file: Path) -> dict[str, list[Any]]:
    tasks = json.loads(task_file.read_text())
    return {
        "task_id": [t["id"] for t in tasks],
        "main_file": [t["success_criteria"][0]["file_path"] for t in tasks],
        "test_file": [t["success_criteria"][1]["file_path"] for t in tasks],
        "w_eff": [WEIGHTS[t["category"]][0] for t in tasks],
        "w_speed": [WEIGHTS[t["category"]][1] for t in tasks],
        "w_cost": [WEIGHTS[t["category"]][2] for t in tasks],
        "w_corr": [WEIGHTS[t["category"]][3] for t in tasks],
        "factor": [FACTORS[t["difficulty"]] for t in tasks],
    }


def polars_scores(runs: Path, task_file: Path) -> Any:
    """The scores as a polars query (lazy, every core)."""
    import polars as pl

    return polars_query(pl.scan_parquet(str(runs / "**" / "*.parquet")), task_file)


def polars_query(runs: Any, task_file: Path, *, log_tokens: bool = False) -> Any:
    """The scores of the lazy frame ``runs`` as a polars query; ``log_tokens``: the token score
    of the ``log-tokens`` profile (``token_efficiency_log``) instead of the spec's linear one."""
    import polars as pl

    c = pl.col
    frame = runs.join(pl.LazyFrame(_tasks_frame(task_file)), on="task_id")
    positive = {f: pl.when(c(f) > 0).then(c(f)) for f in ("execution_time", "estimated_cost")}
    bounds = frame.group_by("task_id").agg(
        c("total_tokens").min().alias("lo_tok"),
        c("total_tokens").max().alias("hi_tok"),
        c("tool_calls").min().alias("lo_calls"),
        c("tool_calls").max().alias("hi_calls"),
        c("iterations").median().alias("med_it"),
        positive["execution_time"].min().alias("lo_time"),
        positive["execution_time"].max().alias("hi_time"),
        positive["estimated_cost"].min().alias("lo_cost"),
        positive["estimated_cost"].max().alias("hi_cost"),
    )
    frame = frame.join(bounds, on="task_id")

    def linear(value: Any, low: Any, high: Any) -> Any:
        return (
            pl.when(value <= low)
            .then(100.0)
            .when(value >= high)
            .then(0.0)
            .otherwise((high - value) / (high - low) * 100.0)
        )

    it = c("iterations")
    iterations = (
        pl.when(it == 1)
        .then(100.0)
        .when(it <= c("med_it"))
        .then(pl.max_horizontal(pl.lit(50.0), 100.0 - (it - 1) * 15.0))
        .otherwise(pl.max_horizontal(pl.lit(0.0), 50.0 - (it - c("med_it")) * 10.0))
    )
    tokens = linear(c("total_tokens"), c("lo_tok"), c("hi_tok"))
    if log_tokens:
        tok, lo_tok, hi_tok = c("total_tokens"), c("lo_tok"), c("hi_tok")
        between = (hi_tok.log1p() - tok.log1p()) / (hi_tok.log1p() - lo_tok.log1p()) * 100.0
        tokens = pl.when(tok <= lo_tok).then(100.0).when(tok >= hi_tok).then(0.0).otherwise(between)
    efficiency = tokens * 0.5 + linear(c("tool_calls"), c("lo_calls"), c("hi_calls")) * 0.3 + iterations * 0.2
    t, lo_t, hi_t = c("execution_time"), c("lo_time"), c("hi_time")
    speed = (
        pl.when(t.is_null() | (t == 0))
        .then(50.0)
        .when(t <= lo_t)
        .then(100.0)
        .when(t >= hi_t)
        .then(0.0)
        .otherwise(pl.min_horizontal(pl.lit(100.0), ((hi_t - t) / (hi_t - lo_t)).pow(0.7) * 100.0))
    )
    cost_value = c("estimated_cost")
    cost = (
        pl.when(cost_value.is_null() | (cost_value == 0))
        .then(50.0)
        .otherwise(linear(cost_value, c("lo_cost"), c("hi_cost")))
    )
    rate = c("tests_passed") / c("tests_total")
    earned = (
        c("files_created").list.contains(c("main_file")).cast(pl.Float64)
        + c("files_created").list.contains(c("test_file")).cast(pl.Float64)
        + c("success").cast(pl.Float64)
        + pl.when(rate >= 1.0).then(1.0).otherwise(rate)
    )
    correctness = earned / 4.0 * 100.0
    overall = efficiency * c("w_eff") + speed * c("w_speed") + cost * c("w_cost") + correctness * c("w_corr")
    adjusted = pl.min_horizontal(pl.lit(100.0), overall * c("factor"))
    scored = frame.with_columns(
        efficiency.round(2).alias("efficiency_score"),
        speed.round(2).alias("speed_score"),
        cost.round(2).alias("cost_score"),
        correctness.round(2).alias("correctness_score"),
        adjusted.round(2).alias("overall_score"),
    )
    return scored.with_columns(
        c("overall_score").rank("min", descending=True).over("task_id").alias("overall_ranking"),
        ((c("overall_score").rank("min").over("task_id") - 1) / pl.len().over("task_id") * 100)
        .round(1)
        .alias("percentile"),
    ).select(
        c("id").alias("submission_id"),
        "task_id",
        "tool",
        "overall_score",
        "efficiency_score",
        "speed_score",
        "cost_score",
        "correctness_score",
        "overall_ranking",
        "percentile",
    )


def duckdb_sql(runs: Path) -> str:
    """The scores as DuckDB SQL (the tasks as the table ``tasks``)."""

    def linear(value: str, low: str, high: str) -> str:
        return f"CASE WHEN {value} <= {low} THEN 100.0 WHEN {value} >= {high} THEN 0.0 ELSE ({high} - {value}) / ({high} - {low}) * 100.0 END"

    return f"""
    WITH r AS (SELECT * FROM read_parquet('{runs}/**/*.parquet') JOIN tasks USING (task_id)),
    b AS (SELECT task_id, min(total_tokens) lo_tok, max(total_tokens) hi_tok, min(tool_calls) lo_calls,
          max(tool_calls) hi_calls, median(iterations) med_it,
          min(execution_time) FILTER (WHERE execution_time > 0) lo_time, max(execution_time) FILTER (WHERE execution_time > 0) hi_time,
          min(estimated_cost) FILTER (WHERE estimated_cost > 0) lo_cost, max(estimated_cost) FILTER (WHERE estimated_cost > 0) hi_cost
          FROM r GROUP BY task_id),
    s AS (SELECT r.id, r.task_id, r.tool, r.factor, r.w_eff, r.w_speed, r.w_cost, r.w_corr,
          {linear("total_tokens", "lo_tok", "hi_tok")} * 0.5 + {linear("tool_calls", "lo_calls", "hi_calls")} * 0.3
          + CASE WHEN iterations = 1 THEN 100.0 WHEN iterations <= med_it THEN greatest(50.0, 100.0 - (iterations - 1) * 15.0)
                 ELSE greatest(0.0, 50.0 - (iterations - med_it) * 10.0) END * 0.2 AS eff,
          CASE WHEN execution_time IS NULL OR execution_time = 0 THEN 50.0 WHEN execution_time <= lo_time THEN 100.0
               WHEN execution_time >= hi_time THEN 0.0
               ELSE least(100.0, pow((hi_time - execution_time) / (hi_time - lo_time), 0.7) * 100.0) END AS speed,
          CASE WHEN estimated_cost IS NULL OR estimated_cost = 0 THEN 50.0 ELSE {linear("estimated_cost", "lo_cost", "hi_cost")} END AS cost,
          (list_contains(files_created, main_file)::DOUBLE + list_contains(files_created, test_file)::DOUBLE + success::DOUBLE
           + CASE WHEN tests_passed / tests_total >= 1.0 THEN 1.0 ELSE tests_passed / tests_total END) / 4.0 * 100.0 AS corr
          FROM r JOIN b USING (task_id)),
    o AS (SELECT id AS submission_id, task_id, tool, round_even(eff, 2) efficiency_score, round_even(speed, 2) speed_score,
          round_even(cost, 2) cost_score, round_even(corr, 2) correctness_score,
          round_even(least(100.0, (eff * w_eff + speed * w_speed + cost * w_cost + corr * w_corr) * factor), 2) overall_score
          FROM s)
    SELECT *, rank() OVER (PARTITION BY task_id ORDER BY overall_score DESC) overall_ranking,
           round((rank() OVER (PARTITION BY task_id ORDER BY overall_score) - 1) / count(*) OVER (PARTITION BY task_id) * 100, 1) percentile
    FROM o"""


def _duckdb(task_file: Path) -> Any:
    import duckdb
    import pyarrow as pa

    connection = duckdb.connect()
    connection.register("tasks_arrow", pa.table(_tasks_frame(task_file)))
    connection.execute("CREATE TABLE tasks AS SELECT * FROM tasks_arrow")
    return connection


def peer(engine: str, job: str, runs: Path, task_file: Path, out: Path | None) -> None:
    """One peer's command, in this process: ``board`` prints the leaderboard, ``score`` writes Parquet."""
    if engine == "polars":
        import polars as pl

        scores = polars_scores(runs, task_file)
        if job == "score":
            scores.sink_parquet(str(out))
            return
        cells = scores.group_by("tool", "task_id").agg(pl.col("overall_score").mean().alias("cell"))
        board = cells.group_by("tool").agg(
            pl.col("cell").mean().alias("score"), pl.col("cell").std().alias("sd"), pl.len().alias("tasks")
        )
        print(board.collect().sort("score", descending=True))
        return
    connection = _duckdb(task_file)
    sql = duckdb_sql(runs)
    if job == "score":
        connection.execute(f"COPY ({sql}) TO '{out}' (FORMAT parquet)")
        return
    board = f"""SELECT tool, avg(cell) score, stddev_samp(cell) sd, count(*) tasks FROM
               (SELECT tool, task_id, avg(overall_score) cell FROM ({sql}) GROUP BY tool, task_id) GROUP BY tool ORDER BY score DESC"""
    print(connection.execute(board).fetchall())


def measured(command: list[str]) -> tuple[float, float]:
    """(wall seconds, peak MiB of the process and its children together) of ``command``."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss(process.pid))
            done.wait(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    _, err = process.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{err.decode()}")
    return seconds, peak[0] / (1 << 20)


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants, from /proc."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) * 1024
            for thread in Path(f"/proc/{current}/task").iterdir():
                pending += [int(c) for c in (thread / "children").read_text().split()]
        except (OSError, StopIteration):
            continue
    return total


def check(runs: Path, task_file: Path, folder: Path) -> None:
    """The peers' overall scores against arena-core's, run for run."""
    import duckdb  # noqa: F401
    import polars as pl

    ours = folder / "ours.parquet"
    subprocess.run(
        [sys.executable, "-m", "arena_core", "score", str(runs), "--tasks", str(task_file), "--format", "parquet",
         "-o", str(ours), "-q"], check=True,
    )  # fmt: skip
    mine = pl.read_parquet(ours).select("submission_id", "overall_score", "overall_ranking", "percentile")
    for engine in ("polars", "duckdb"):
        theirs = folder / f"{engine}.parquet"
        peer(engine, "score", runs, task_file, theirs)
        joined = mine.join(pl.read_parquet(theirs), on="submission_id", suffix="_peer")
        for column in ("overall_score", "overall_ranking", "percentile"):
            differ = (joined[column] != joined[f"{column}_peer"].cast(joined[column].dtype)).sum()
            print(f"   {engine}: {len(joined):,} runs joined, {differ} differ in {column}")


def compile_modules() -> None:
    """arena-core's modules byte-compiled, as installing a wheel leaves them (pip compiles them, as
    it did the peers'): an editable install under ``PYTHONDONTWRITEBYTECODE`` has none, and each
    command would compile 180 modules again (0.28 s to import the command's modules, 0.16 s
    compiled)."""
    import arena_core
    import arena_plugins

    for package in (arena_core, arena_plugins):
        compileall.compile_dir(str(Path(package.__file__).parent), quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", type=float, default=[1e6, 1e7])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="times each command is run (its median is printed)")
    parser.add_argument("--check", action="store_true", help="compare the peers' scores with arena-core's")
    parser.add_argument("--peer", nargs=5, metavar=("ENGINE", "JOB", "RUNS", "TASKS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer:
        engine, job, runs, task_file, out = args.peer
        peer(engine, job, Path(runs), Path(task_file), Path(out))
        return
    print(
        f"Runs past memory: arena-core against polars and DuckDB on sharded Parquet ({args.tasks:,} tasks; "
        f"median of {args.repeat} runs each)"
    )
    compile_modules()
    for size in (int(n) for n in args.runs):
        with tempfile.TemporaryDirectory(prefix="arena-scale-") as scratch:
            folder = Path(scratch)
            runs, task_file = generate(folder, size, args.tasks)
            os.sync()  # the files written: the commands timed next do not share the machine with their writeback
            print(f"{size:,} runs:")
            if args.check:
                check(runs, task_file, folder)
            for job in ("board", "score"):
                out = folder / "out.parquet"
                arena = [sys.executable, "-m", "arena_core"]
                ours = (
                    [*arena, "leaderboard", str(runs), "--tasks", str(task_file), "-q"]
                    if job == "board"
                    else [
                        *arena,
                        "score",
                        str(runs),
                        "--tasks",
                        str(task_file),
                        "--format",
                        "parquet",
                        "-o",
                        str(out),
                        "-q",
                    ]
                )
                commands = {"arena-core": ours}
                for engine in ("polars", "duckdb"):
                    commands[engine] = [
                        sys.executable,
                        __file__,
                        "--peer",
                        engine,
                        job,
                        str(runs),
                        str(task_file),
                        str(out),
                    ]
                timed: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
                for _ in range(args.repeat):  # the engines take turns
                    for name, command in commands.items():
                        out.unlink(missing_ok=True)
                        timed[name].append(measured(command))
                figures = {
                    name: (statistics.median(s for s, _ in samples), max(m for _, m in samples))
                    for name, samples in timed.items()
                }
                faster = min(figures["polars"][0], figures["duckdb"][0])
                name = "leaderboard" if job == "board" else "score -o parquet"
                cells = "   ".join(f"{k} {s:6.2f} s {m:7,.0f} MiB" for k, (s, m) in figures.items())
                print(f"   {name:<17} {cells}   arena-core / faster peer: {figures['arena-core'][0] / faster:.2f}x")


if __name__ == "__main__":
    main()
