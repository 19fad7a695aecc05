"""arena-core's scoring benchmark: one command, every figure against a reference measured in the same run.

    python benchmarks/run.py            # full size (1,000,000 submissions over 1,000 tasks)
    python benchmarks/run.py --small    # a quick run (100,000 over 100) for a laptop check
    python benchmarks/run.py --tiny     # seconds: checks that every section runs (the tests use it)

Prints, each measured here and now (best of several repeats where a figure is a time):
  1. per-record path vs batch path on 100,000 submissions, as a ratio;
  2. the batch path on the full arena: time to score, baseline and rank (file parsing and data
     generation excluded), throughput in submissions per second, and peak memory of a child
     process that does only that;
  3. single ``Arena.evaluate`` latency, median and p99, with the built-in plugins, against the
     spec's own ``calculate_overall_score`` on plain dicts (``tests/spec_reference.py``), and
     with the submission given as a dict;
  4. ``evaluate_many`` from a list of dicts (what users hold), against the plain NumPy reference
     of ``benchmarks/reference.py`` started from the same dicts, each in a child process (time,
     and peak memory above the dicts themselves), for 1,000 tasks and for tasks of 10 submissions;
  5-7. the command line on a JSON Lines file, ``compare``, and the pipeline's batch latency as
     its store grows (``benchmarks/paths.py``);
  8. the ``sandbox`` runner's cost per command against ``local``, and 9. workspace checks per
     second on threads and on a local Dask cluster (``benchmarks/sandbox.py``).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import paths

import sandbox

STAMP = "2026-01-01T00:00:00+00:00"


def best_of(repeats: int, work: Any) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def child_full_run(tasks: int, per_task: int) -> None:
    """Run in a fresh process: generate columns, then time one full batch pass; print JSON."""
    from arena_core import Arena
    from arena_core.examples.synthetic import generate_columns

    arena = Arena(autoload=False)
    columns, task_map = generate_columns(tasks=tasks, submissions_per_task=per_task, seed=11)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        result = arena.evaluate_many(columns, task_map, evaluated_at=STAMP)
        timings.append(time.perf_counter() - start)
        del result
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"seconds": min(timings), "peak_mib": peak / 1024, "data_mib": before / 1024}))


def child_dicts_run(tasks: int, per_task: int, which: str) -> None:
    """Run in a fresh process: build the records, then time ``which`` (``arena`` or ``reference``)
    on them; print JSON with the best time and the peak memory above the records."""
    from arena_core import Arena
    from arena_core.examples.synthetic import generate_columns

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from reference import score_records

    columns, task_map = generate_columns(tasks=tasks, submissions_per_task=per_task, seed=11)
    records = _as_records(columns)
    del columns
    arena = Arena(autoload=False)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    timings = []
    for _ in range(2):
        start = time.perf_counter()
        result = (
            arena.evaluate_many(records, task_map, evaluated_at=STAMP) if which == "arena" else score_records(records)
        )
        timings.append(time.perf_counter() - start)
        del result
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": min(timings), "extra_mib": (peak - before) / 1024, "records_mib": before / 1024}))


def _as_records(columns: dict[str, Any]) -> list[dict[str, Any]]:
    """Columns as the list of dicts a user holds (a missing figure is an absent key)."""
    lists = {k: v.tolist() if hasattr(v, "tolist") else list(v) for k, v in columns.items()}
    keys = list(lists)
    records = []
    for row in zip(*(lists[k] for k in keys), strict=True):
        record = {}
        for key, value in zip(keys, row, strict=True):
            if not (isinstance(value, float) and value != value):
                record[key] = list(value) if isinstance(value, tuple) else value
        records.append(record)
    return records


def _child(*args: object) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", *map(str, args)], check=True, capture_output=True, text=True
    )
    return dict(json.loads(out.stdout))


def per_record_vs_batch(n_tasks: int, per_task: int) -> tuple[float, float]:
    import arena_core.engine.many as arena_module
    from arena_core import Arena
    from arena_core.examples.synthetic import generate_columns

    arena = Arena(autoload=False)
    columns, task_map = generate_columns(tasks=n_tasks, submissions_per_task=per_task, seed=5)
    batch = best_of(3, lambda: arena.evaluate_many(columns, task_map, evaluated_at=STAMP))
    real = arena_module.evaluate_columns
    arena_module.evaluate_columns = lambda *args, **kwargs: None  # force the per-record path
    try:
        per_record = best_of(1, lambda: arena.evaluate_many(columns, task_map, evaluated_at=STAMP))
    finally:
        arena_module.evaluate_columns = real
    return per_record, batch


def _median_p99(work: Any, samples: int) -> tuple[float, float]:
    """Median and 99th percentile of ``samples`` timed calls, in microseconds."""
    timings = []
    for i in range(samples):
        start = time.perf_counter_ns()
        work(i)
        timings.append(time.perf_counter_ns() - start)
    timings.sort()
    return timings[len(timings) // 2] / 1000, timings[int(len(timings) * 0.99)] / 1000


def single_latency(samples: int = 20_000) -> tuple[tuple[float, float], float, float, float]:
    """(median, p99) of ``Arena.evaluate``; then the medians of ``Arena.evaluate`` and of the
    spec's own function on plain dicts, on the spec's criteria: the reference measured in the same
    run, so that the timing noise of a shared machine cancels out of the ratio; last, the median
    of ``Arena.evaluate`` given the submission as a dict (structured on each call)."""
    from arena_core import Arena, Submission, Task, structure, to_dict
    from arena_core.examples.synthetic import generate_arena

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import spec_reference

    arena = Arena(autoload=False)
    tasks, subs = generate_arena(tasks=1, submissions_per_task=50)
    task = structure(tasks[0], Task)
    models = [structure(s, Submission) for s in subs]
    baseline = arena.compute_baseline(task.id, models)
    spec_baseline = to_dict(baseline)
    for s in models * 20:  # warm up
        arena.evaluate(s, task, baseline, evaluated_at=STAMP)
    ours = _median_p99(lambda i: arena.evaluate(models[i % 50], task, baseline, evaluated_at=STAMP), samples)
    # The spec's function knows only its own criterion types: compare both on those.
    spec_task = {**tasks[0], "success_criteria": [c for c in tasks[0]["success_criteria"] if c["type"] != "tests_pass"]}
    spec_model = structure(spec_task, Task)
    same_work = _median_p99(lambda i: arena.evaluate(models[i % 50], spec_model, baseline, evaluated_at=STAMP), samples)
    reference = _median_p99(
        lambda i: spec_reference.calculate_overall_score(subs[i % 50], spec_task, spec_baseline), samples
    )
    from_dict = _median_p99(lambda i: arena.evaluate(subs[i % 50], task, baseline, evaluated_at=STAMP), samples)
    return ours, same_work[0], reference[0], from_dict[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="100,000 submissions over 100 tasks")
    parser.add_argument("--tiny", action="store_true", help="2,000 submissions over 20 tasks: a smoke run")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.child[0] == "compare":
            paths.child_compare(int(args.child[1]), int(args.child[2]), args.child[3])
        elif len(args.child) == 3:
            child_dicts_run(int(args.child[0]), int(args.child[1]), args.child[2])
        else:
            child_full_run(int(args.child[0]), int(args.child[1]))
        return
    tasks, per_task = (20, 100) if args.tiny else (100, 1000) if args.small else (1000, 1000)
    n = tasks * per_task

    compared = (20, 100) if args.tiny else (100, 1000)
    per_record, batch = per_record_vs_batch(*compared)
    print(f"1. per-record vs batch path, {compared[0] * compared[1]:,} submissions over {compared[0]} tasks")
    print(
        f"   per-record {per_record:8.2f} s   batch {batch:6.3f} s   ratio {per_record / batch:6.1f}x  (target >= 30x)"
    )

    full = _child(tasks, per_task)
    print(f"2. batch path, {n:,} submissions over {tasks:,} tasks (score + baseline + rank; data generation excluded)")
    print(
        f"   {full['seconds']:.2f} s (target < 3 s)   {n / full['seconds']:,.0f} submissions/s   "
        f"peak memory {full['peak_mib']:,.0f} MiB (target < 1,536 MiB; the input columns alone: {full['data_mib']:,.0f} MiB)"
    )

    (median, p99), same_work, spec_median, from_dict = single_latency(200 if args.tiny else 20_000)
    print("3. single Arena.evaluate with the built-in plugins (4 criteria, models in)")
    print(
        f"   median {median:.1f} us   p99 {p99:.1f} us   "
        f"= {median / (batch / (compared[0] * compared[1]) * 1e6):.0f}x the batch path's cost per submission"
    )
    print(
        f"   on the spec's 3 criteria: {same_work:.1f} us = {same_work / spec_median:.1f}x the spec's "
        f"calculate_overall_score on plain dicts ({spec_median:.1f} us; no validation, no plugins)"
    )
    print(
        f"   the submission as a dict (validated and structured on each call): median {from_dict:.1f} us "
        "(target < 15 us)"
    )
    dicts_section(tasks, per_task)
    dicts_section(n // 10, 10)
    paths.command_line(tasks, per_task)
    paths.comparing(tasks, per_task)
    paths.pipeline(*((5, 50, 5) if args.tiny else (20, 500, 50)))
    sandbox.overhead(5 if args.tiny else 50)
    sandbox.executors(10 if args.tiny else 200)


def dicts_section(tasks: int, per_task: int) -> None:
    """Section 4 for one shape of arena."""
    ours, reference = _child(tasks, per_task, "arena"), _child(tasks, per_task, "reference")
    n = tasks * per_task
    print(f"4. evaluate_many from {n:,} dicts over {tasks:,} tasks, against the NumPy reference from the same dicts")
    print(
        f"   arena {ours['seconds']:.2f} s, reference {reference['seconds']:.2f} s: "
        f"{ours['seconds'] / reference['seconds']:.2f}x (target <= 2x); peak memory above the records "
        f"{ours['extra_mib']:,.0f} MiB (reference {reference['extra_mib']:,.0f} MiB; the records: {ours['records_mib']:,.0f} MiB)"
    )


if __name__ == "__main__":
    main()
