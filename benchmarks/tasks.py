"""``arena tasks --by tool,model`` (task health) on a JSON Lines file, against the same rows
computed by a polars query (the spec's scores, then per task: runs, groups, solve rate, mean
overall score, the point-biserial discrimination, flaky cells) and the Rasch difficulties fitted
by SciPy's Newton-CG over the cells that hold runs (the penalised likelihood of
:mod:`arena_core.stats.irt`), each command a fresh process printing its rows as CSV. Checked
equal first: every task's counts and flags, its rates and means to 1e-9, its difficulty to
1e-3 logits. The commands take turns ``--repeat`` times; the medians of their wall times and
the ratio are printed (target, issue 56: within 1.5x).

    python benchmarks/tasks.py                     # 500,000 runs over 25,000 tasks
    python benchmarks/tasks.py --runs 2e5 5e5 2e6  # a task per 20 runs
    python benchmarks/tasks.py --with-meta         # each run with a meta, as importers write them
    python benchmarks/tasks.py --runs 2e6 --models 2000  # 10,000 (tool, model) groups, about a run a cell
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale import compile_modules, polars_query  # noqa: E402
from turns import ratio_line  # noqa: E402

#: Models each tool runs with by default: groups are (tool, model) pairs.
MODELS = 8


def generate(folder: Path, runs: int, tasks: int, with_meta: bool = False, models: int = MODELS) -> tuple[Path, Path]:
    """``runs`` synthetic runs over ``tasks`` tasks whose verdicts follow a Rasch model of
    (tool, model) abilities and task difficulties, a run that succeeds creating the task's
    files and passing every test (correctness 100), one that fails passing some; and the
    tasks file."""
    import numpy as np
    import orjson

    from arena_core.examples.synthetic import generate_columns

    columns, task_map = generate_columns(tasks=tasks, submissions_per_task=runs // tasks, seed=5)
    rng = np.random.default_rng(5)
    count = len(columns["id"])
    model = rng.integers(0, models, size=count)
    tools = sorted(set(columns["tool"]))
    ability = rng.normal(0, 1, size=(len(tools), models))
    tool = np.searchsorted(tools, columns["tool"])
    task_ids = sorted(task_map)
    difficulty = dict(zip(task_ids, rng.normal(0, 1.2, size=len(task_ids)).tolist(), strict=True))
    gap = ability[tool, model] - np.array([difficulty[t] for t in columns["task_id"]])
    success = rng.random(count) < 1 / (1 + np.exp(-gap))
    total = np.asarray(columns["tests_total"])
    passed = np.where(success, total, np.floor(rng.random(count) * total))
    files = {t: [c["file_path"] for c in task["success_criteria"] if c["type"] == "file_exists"]
             for t, task in task_map.items()}  # fmt: skip
    path, task_file = folder / "runs.jsonl", folder / "tasks.json"
    keys = ("id", "task_id", "tool", "total_tokens", "tool_calls", "iterations", "execution_time", "estimated_cost")
    with path.open("wb") as out:
        for i in range(count):
            record: dict[str, Any] = {k: _plain(columns[k][i]) for k in keys}
            record["model"] = f"model-{model[i]}"
            record["success"] = bool(success[i])
            record["tests_total"], record["tests_passed"] = int(total[i]), int(passed[i])
            record["files_created"] = files[record["task_id"]] if success[i] else files[record["task_id"]][:1]
            if with_meta:
                record["meta"] = {"run_id": f"run-{i % 100}"}
            out.write(orjson.dumps({k: v for k, v in record.items() if v is not None and v == v}) + b"\n")
    task_file.write_text(json.dumps(list(task_map.values())))
    return path, task_file


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def reference(runs: Path, task_file: Path) -> Any:
    """The rows of ``arena tasks --by tool,model`` (task order) as a polars frame."""
    import numpy as np
    import polars as pl

    c = pl.col
    scored = polars_query(pl.scan_ndjson(runs), task_file).join(
        pl.scan_ndjson(runs).select(c("id").alias("submission_id"), "model"), on="submission_id"
    )
    scored = scored.with_columns(
        (c("correctness_score") >= 100.0).cast(pl.Float64).alias("solved"),
        pl.struct("tool", "model").rank("dense").cast(pl.Int64).alias("group") - 1,
        c("task_id").rank("dense").cast(pl.Int64).alias("task") - 1,
    ).with_columns(c("solved").mean().over("group").alias("group_rate"))
    frame = scored.collect()
    cells = frame.group_by("group", "task").agg(
        pl.len().alias("n"), c("solved").mean().alias("rate"), (c("correctness_score") / 100).sum().alias("wins")
    )
    varies = (c("solved").min() != c("solved").max()) & (c("group_rate").min() != c("group_rate").max())
    rows = frame.group_by("task", "task_id").agg(
        pl.len().alias("runs"),
        c("group").n_unique().alias("groups"),
        c("solved").mean().alias("solve_rate"),
        c("overall_score").mean().alias("mean_score"),
        pl.when(varies & (pl.len() >= 2)).then(pl.corr("solved", "group_rate")).alias("discrimination"),
    )
    flaky = cells.group_by("task").agg(((c("n") >= 2) & (c("rate") > 0) & (c("rate") < 1)).any().alias("flaky"))
    rows = rows.join(flaky, on="task").sort("task")
    difficulty = rasch(*(cells[k].to_numpy() for k in ("group", "task", "n", "wins")), len(rows))
    low, high = np.quantile(difficulty, [1 / 3, 2 / 3])
    labels = pl.DataFrame([(t["id"], t["difficulty"]) for t in json.loads(task_file.read_text())],
                          schema=["task_id", "label"], orient="row")  # fmt: skip
    rows = rows.with_columns(pl.Series("difficulty", difficulty)).join(labels, on="task_id", how="left").sort("task")
    d, label, rate = c("difficulty"), c("label"), c("solve_rate")
    flags = [
        ("unsolved", rate == 0.0),
        ("saturated", rate == 1.0),
        ("flaky", c("flaky")),
        ("undiscriminating", c("discrimination").is_null() | (c("discrimination") < 0.1)),
        ("label_disagrees", ((label == "beginner") & (d > high)) | ((label == "advanced") & (d < low))),
    ]
    named = [pl.when(present).then(pl.lit(name)) for name, present in flags]
    return rows.select(
        "task_id", "runs", "groups", "solve_rate", "mean_score", "discrimination", "difficulty",
        pl.concat_str(named, separator=", ", ignore_nulls=True).alias("flags"),
    )  # fmt: skip


def rasch(group: Any, task: Any, n: Any, wins: Any, tasks: int) -> Any:
    """The difficulties at the mode of the Rasch likelihood over the cells that hold runs,
    abilities N(0, 2) and difficulties N(0, 2) a priori, found by SciPy's Newton-CG with the
    Hessian's products over the cells (of SciPy's methods the fastest here: 1.0 s at 25,000
    tasks, where L-BFGS-B takes 10 s)."""
    import numpy as np
    from scipy.optimize import minimize

    from arena_core.stats.irt import ability_prior

    groups, precision = int(group.max()) + 1, 1 / ability_prior("rasch") ** 2

    def loss(v: Any) -> tuple[float, Any]:
        theta, b = v[:groups], v[groups:]
        z = theta[group] - b[task]
        log_p, log_q = -np.logaddexp(0.0, -z), -np.logaddexp(0.0, z)
        value = (wins * log_p + (n - wins) * log_q).sum() - (theta**2).sum() * precision / 2 - (b**2).sum() / 8
        error = wins - n * np.exp(log_p)
        grad = np.concatenate([np.bincount(group, error, groups) - theta * precision,
                               -np.bincount(task, error, tasks) - b / 4])  # fmt: skip
        return -value, -grad

    def hessian_times(v: Any, p: Any) -> Any:
        z = v[:groups][group] - v[groups:][task]
        moved = n / (1 + np.exp(-z)) / (1 + np.exp(z)) * (p[:groups][group] - p[groups:][task])
        return np.concatenate([np.bincount(group, moved, groups) + p[:groups] * precision,
                               -np.bincount(task, moved, tasks) + p[groups:] / 4])  # fmt: skip

    found = minimize(loss, np.zeros(groups + tasks), jac=True, hessp=hessian_times, method="Newton-CG",
                     options={"xtol": 1e-8})  # fmt: skip
    return found.x[groups:]


def ours(runs: Path, task_file: Path) -> Any:
    """The rows ``arena tasks --format json`` prints (every figure unrounded), as a polars frame."""
    import polars as pl

    command = [*_command(runs, task_file)[:-3], "--format", "json", "-q"]
    rows = json.loads(subprocess.run(command, check=True, capture_output=True).stdout)["rows"]
    return pl.DataFrame(
        [{**{k: row[k] for k in ("task", "runs", "groups", "solve_rate", "mean_score", "discrimination",
                                 "difficulty")}, "flags": ", ".join(row["flags"])} for row in rows]
    )  # fmt: skip


def _command(runs: Path, task_file: Path) -> list[str]:
    """``arena tasks`` as timed: its rows as CSV, as the reference prints them."""
    return [sys.executable, "-m", "arena_core", "tasks", str(runs), "--tasks", str(task_file), "--by", "tool,model",
            "--format", "csv", "-q"]  # fmt: skip


def check(runs: Path, task_file: Path) -> None:
    """Every task's row equal: counts and flags exactly, rates and means to 1e-9, difficulty
    to 1e-3 logits."""
    import numpy as np

    mine, theirs = ours(runs, task_file), reference(runs, task_file)
    assert mine["task"].to_list() == theirs["task_id"].to_list(), "the same tasks in the same order"
    for name in ("runs", "groups"):
        assert mine[name].to_list() == theirs[name].to_list(), name
    for name, tolerance in (("solve_rate", 1e-9), ("mean_score", 1e-9), ("discrimination", 1e-9), ("difficulty", 1e-3)):
        a, b = (frame[name].cast(float).fill_null(np.nan).to_numpy() for frame in (mine, theirs))
        assert np.allclose(a, b, atol=tolerance, equal_nan=True), (name, float(np.nanmax(np.abs(a - b))))
    assert mine["flags"].to_list() == theirs["flags"].fill_null("").to_list(), "flags"
    solved = float(theirs["solve_rate"].mean())
    print(
        f"   {len(mine):,} tasks equal; mean solve rate {solved:.2f}, {int(theirs['flags'].str.contains('flaky').sum()):,} flaky"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", type=float, default=[5e5])
    parser.add_argument("--runs-per-task", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--with-meta", action="store_true", help="each run has a meta, as importers write them")
    parser.add_argument("--models", type=int, default=MODELS, help="models each tool runs with")
    args = parser.parse_args()
    compile_modules()
    for size in map(int, args.runs):
        folder = Path(tempfile.mkdtemp(prefix="arena-tasks-bench-"))
        runs, task_file = generate(folder, size, size // args.runs_per_task, args.with_meta, args.models)
        check(runs, task_file)
        commands = {"arena tasks": _command(runs, task_file),
                    "polars + SciPy": [sys.executable, __file__, "--reference", str(runs), str(task_file)]}  # fmt: skip
        print(ratio_line(f"{size:>9,} runs", commands, args.repeat))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--reference"]:
        reference(Path(sys.argv[2]), Path(sys.argv[3])).write_csv(sys.stdout)
    else:
        main()
