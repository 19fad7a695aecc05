"""``arena compare`` of two profiles (``default`` against ``log-tokens``) on a JSON Lines file,
against the same report's figures computed by a polars query (both profiles' scores, reading the
same file), SciPy (Kendall's tau-b and Spearman's rho, pooled and per task) and NumPy (the mean
difference's seeded bootstrap interval), each command a fresh process. Checked equal first: both profiles' overall scores run for run (``arena score
--format parquet`` against the query; a few in 100,000 may be a hundredth apart, where the
query's sum in another order lands on the other side of a half before rounding) and the
report's lines of means, the interval and rank agreement. The
commands take turns ``--repeat`` times; the medians of their wall times and the ratio are printed
(target, issue 56: within 1.5x).

    python benchmarks/compare.py                     # 300,000 runs over 1,000 tasks
    python benchmarks/compare.py --runs 1e5 3e5 1e6
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale import compile_modules, polars_query  # noqa: E402
from turns import ratio_line  # noqa: E402


def generate(folder: Path, runs: int, tasks: int) -> tuple[Path, Path]:
    """A JSON Lines file of ``runs`` synthetic runs over ``tasks`` tasks, and the tasks file."""
    import orjson

    from arena_core.examples.synthetic import generate_columns

    columns, task_map = generate_columns(tasks=tasks, submissions_per_task=runs // tasks, seed=3)
    keys = list(columns)
    path, task_file = folder / "runs.jsonl", folder / "tasks.json"
    with path.open("wb") as out:
        for row in zip(*(columns[k] for k in keys), strict=True):
            record = {k: v.item() if hasattr(v, "item") else v for k, v in zip(keys, row, strict=True)}
            out.write(orjson.dumps({k: v for k, v in record.items() if v is not None and v == v}) + b"\n")
    task_file.write_text(json.dumps(list(task_map.values())))
    return path, task_file


def reference(runs: Path, task_file: Path) -> list[str]:
    """The report's lines of means and rank agreement, from the polars query and SciPy."""
    import numpy as np
    import polars as pl
    from scipy.stats import kendalltau, spearmanr

    a, b = pl.collect_all([polars_query(pl.scan_ndjson(runs), task_file, log_tokens=side) for side in (False, True)])
    joined = a.select("submission_id", "task_id", "overall_score").join(
        b.select("submission_id", pl.col("overall_score").alias("b")), on="submission_id"
    )
    joined = joined.sort("task_id")
    x, y = joined["overall_score"].to_numpy(), joined["b"].to_numpy()
    task_ids = joined["task_id"].to_numpy()
    starts = np.flatnonzero(np.r_[True, task_ids[1:] != task_ids[:-1]])
    ends = np.r_[starts[1:], len(task_ids)]
    taus = [(kendalltau(x[s:e], y[s:e]).statistic, task_ids[s]) for s, e in zip(starts, ends, strict=True)]
    measured = [(tau, task) for tau, task in taus if not np.isnan(tau)]
    lowest = min(measured, key=lambda pair: pair[0])
    low, high = interval(y - x)
    return [
        f"Mean overall score: A {statistics.fmean(x.tolist()):.2f}, B {statistics.fmean(y.tolist()):.2f}; "
        f"mean difference B - A {statistics.fmean((y - x).tolist()):+.2f} (95% CI {low:+.2f} to {high:+.2f}; ",
        f"Rank agreement (all submissions): Kendall tau-b {kendalltau(x, y).statistic:.3f}, "
        f"Spearman rho {spearmanr(x, y).statistic:.3f}",
        f"Within tasks: median tau-b {float(np.median([t for t, _ in measured])):.3f}, "
        f"lowest {lowest[0]:.3f} ({lowest[1]})",
    ]


def interval(delta: Any, resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """The 95 % interval of the mean difference as ``arena compare`` states it: the percentile
    bootstrap of the runs (the same seeded draws, a block of resamples at a time) up to 200
    million resampled values, beyond that its normal limit."""
    import numpy as np

    n = len(delta)
    if n * resamples > 200_000_000:
        spread = float(np.std(delta)) / n**0.5 * statistics.NormalDist().inv_cdf(0.975)
        return float(np.mean(delta)) - spread, float(np.mean(delta)) + spread
    rng = np.random.default_rng(seed)
    block = max(1, 4_000_000 // n)
    means = [
        delta[rng.integers(0, n, size=(min(block, resamples - k), n))].mean(axis=1) for k in range(0, resamples, block)
    ]
    low, high = np.quantile(np.concatenate(means), [0.025, 0.975])
    return float(low), float(high)


def ours(runs: Path, task_file: Path) -> list[str]:
    command = [sys.executable, "-m", "arena_core", "compare", str(runs), "--tasks", str(task_file), "--b", "log-tokens"]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines()


def check(runs: Path, task_file: Path, folder: Path) -> None:
    """Both profiles' overall scores run for run, then the report's lines, equal."""
    import polars as pl

    for profile, log_tokens in (("default", False), ("log-tokens", True)):
        out = folder / f"{profile}.parquet"
        subprocess.run([sys.executable, "-m", "arena_core", "-p", profile, "score", str(runs), "--tasks",
                        str(task_file), "--format", "parquet", "-o", str(out), "-q"], check=True)  # fmt: skip
        mine = pl.read_parquet(out).select("submission_id", "overall_score")
        theirs = polars_query(pl.scan_ndjson(runs), task_file, log_tokens=log_tokens).collect()
        joined = mine.join(theirs.select("submission_id", "overall_score"), on="submission_id", suffix="_peer")
        assert len(joined) == len(mine), "every run scored by both"
        gaps = (joined["overall_score"] - joined["overall_score_peer"]).abs()
        differ = int((gaps > 0).sum())  # a sum in another order, rounded on the other side of a half
        assert float(gaps.max() or 0) < 0.0101 and differ <= len(joined) // 10_000, f"{profile}: {differ} differ"
        print(f"   {profile}: {len(joined):,} runs, {differ} overall scores a hundredth apart (rounding of a half)")
    printed, expected = ours(runs, task_file), reference(runs, task_file)
    for line in expected:
        assert any(_agrees(p, line) for p in printed), f"not printed by arena compare: {line!r}"


def _agrees(printed: str, expected: str) -> bool:
    """Whether ``printed`` starts as ``expected`` does, each figure within one unit of its last
    printed place (a bootstrap quantile's mean summed in another order may round the other way)."""
    figure = re.compile(r"[+-]?\d+\.(\d+)")
    text = [figure.sub("#", line) for line in (printed, expected)]
    if not text[0].startswith(text[1]):
        return False
    pairs = zip(figure.finditer(printed), figure.finditer(expected), strict=False)
    return all(abs(float(a[0]) - float(b[0])) <= 1.01 * 10 ** -len(b[1]) for a, b in pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", type=float, default=[3e5])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    compile_modules()
    for size in map(int, args.runs):
        folder = Path(tempfile.mkdtemp(prefix="arena-compare-bench-"))
        runs, task_file = generate(folder, size, args.tasks)
        check(runs, task_file, folder)
        commands = {
            "arena compare": [sys.executable, "-m", "arena_core", "compare", str(runs), "--tasks", str(task_file),
                              "--b", "log-tokens"],
            "polars + SciPy": [sys.executable, __file__, "--reference", str(runs), str(task_file)],
        }  # fmt: skip
        print(ratio_line(f"{size:>9,} runs", commands, args.repeat))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--reference"]:
        print("\n".join(reference(Path(sys.argv[2]), Path(sys.argv[3]))))
    else:
        main()
