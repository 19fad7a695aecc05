"""arena-core's scoring benchmark: one command, every figure against a reference measured in the same run.

    python benchmarks/run.py            # full size (1,000,000 submissions over 1,000 tasks)
    python benchmarks/run.py --small    # a quick run (100,000 over 100) for a laptop check

Prints, each measured here and now (best of several repeats where a figure is a time):
  1. per-record path vs batch path on 100,000 submissions, as a ratio;
  2. the batch path on the full arena: time to score, baseline and rank (file parsing and data
     generation excluded), throughput in submissions per second, and peak memory of a child
     process that does only that;
  3. single ``Arena.evaluate`` latency, median and p99, with the built-in plugins, against the
     spec's own ``calculate_overall_score`` on plain dicts (``tests/spec_reference.py``).
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


def single_latency(samples: int = 20_000) -> tuple[tuple[float, float], float, float]:
    """(median, p99) of ``Arena.evaluate``; then the medians of ``Arena.evaluate`` and of the
    spec's own function on plain dicts, on the spec's criteria: the reference measured in the same
    run, so that the timing noise of a shared machine cancels out of the ratio."""
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
    return ours, same_work[0], reference[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="100,000 submissions over 100 tasks")
    parser.add_argument("--child", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_full_run(*args.child)
        return
    tasks, per_task = (100, 1000) if args.small else (1000, 1000)
    n = tasks * per_task

    per_record, batch = per_record_vs_batch(100, 1000)
    print("1. per-record vs batch path, 100,000 submissions over 100 tasks")
    print(
        f"   per-record {per_record:8.2f} s   batch {batch:6.3f} s   ratio {per_record / batch:6.1f}x  (target >= 30x)"
    )

    out = subprocess.run(
        [sys.executable, __file__, "--child", str(tasks), str(per_task)], check=True, capture_output=True, text=True
    ).stdout
    full = json.loads(out)
    print(f"2. batch path, {n:,} submissions over {tasks:,} tasks (score + baseline + rank; data generation excluded)")
    print(
        f"   {full['seconds']:.2f} s (target < 3 s)   {n / full['seconds']:,.0f} submissions/s   "
        f"peak memory {full['peak_mib']:,.0f} MiB (target < 1,536 MiB; the input columns alone: {full['data_mib']:,.0f} MiB)"
    )

    (median, p99), same_work, spec_median = single_latency()
    print("3. single Arena.evaluate with the built-in plugins (4 criteria, models in)")
    print(
        f"   median {median:.1f} us (target < 30 us)   p99 {p99:.1f} us   "
        f"= {median / (batch / 100_000 * 1e6):.0f}x the batch path's cost per submission"
    )
    print(
        f"   on the spec's 3 criteria: {same_work:.1f} us = {same_work / spec_median:.1f}x the spec's "
        f"calculate_overall_score on plain dicts ({spec_median:.1f} us; no validation, no plugins)"
    )


if __name__ == "__main__":
    main()
