"""``arena import`` at two sizes, for the layouts whose files or ids an importer relates to one
another, so that work growing with the square of the input shows:

- Terminal-Bench trials in run folders, every other run with its run's ``results.json`` (each
  trial file is asked whether it was seen, and whether a run's file already holds it);
- OpenHands run folders, each with its ``output.jsonl`` and a critic attempt (each file is asked
  whether it is an attempt, each folder whether it has an output);
- a SWE-bench run report of that many instances (each id is asked in which of the report's lists
  it is);
- Harbor jobs of ten trials each, beside each other (each job's trials are found among all).

    python benchmarks/import_growth.py                # 2,500 and 10,000 runs
    python benchmarks/import_growth.py --runs 1000    # 1,000 and 4,000

Each import runs in this process, as ``arena import FORMAT FOLDER -o FILE``, its best of three;
printed is a run's time at four times the size over a run's time at the size (1.0: linear; work
that grows with the square of the input shows as up to 4). Target: within 1.5x.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.importers import SAMPLES, harbor, imported  # noqa: E402

TRIAL = SAMPLES / "harbor-terminal-bench" / "tb.trial.droid-gpt-5.fix-git.results.json"
OUTPUT = SAMPLES / "openhands-eval-output" / "resolver.mock_output.first-line.jsonl"


def terminal_bench(folder: Path, runs: int) -> Path:
    """``runs`` trials, 500 to a run folder; every other run folder has the run's own file."""
    trial = orjson.loads(TRIAL.read_bytes())
    root = folder / "tb"
    for first in range(0, runs, 500):
        run = root / f"run-{first // 500:03d}"
        trials = []
        for i in range(first, min(first + 500, runs)):
            trial.update(id=f"trial-{i:06d}", trial_name=f"task-{i:06d}.1-of-1", task_id=f"task-{i:06d}")
            place = run / trial["task_id"] / trial["trial_name"]
            place.mkdir(parents=True)
            (place / "results.json").write_bytes(orjson.dumps(trial))
            trials.append(dict(trial))
        if first // 500 % 2 == 0:
            resolved = sum(1 for t in trials if t["is_resolved"])
            whole = {"id": run.name, "results": trials, "n_resolved": resolved, "accuracy": resolved / len(trials)}
            (run / "results.json").write_bytes(orjson.dumps(whole))
    return root


def openhands(folder: Path, runs: int) -> Path:
    """``runs`` run folders, each with an ``output.jsonl`` of one instance and a critic attempt."""
    line = orjson.loads(OUTPUT.read_bytes().splitlines()[0])
    root = folder / "openhands"
    for i in range(runs):
        place = root / f"run-{i:06d}"
        place.mkdir(parents=True)
        line["instance_id"] = f"owner__repo-{i}"
        text = orjson.dumps(line) + b"\n"
        (place / "output.jsonl").write_bytes(text)
        (place / "output.critic_attempt_1.jsonl").write_bytes(text)
    return root


def swebench(folder: Path, runs: int) -> Path:
    """A run report of ``runs`` instances: half resolved, four tenths unresolved, the rest errors."""
    ids = [f"owner__repo-{i}" for i in range(runs)]
    half, errors = runs // 2, runs - runs // 10
    report = {
        "total_instances": runs, "submitted_instances": runs, "resolved_instances": half,
        "submitted_ids": ids, "completed_ids": ids[:errors], "resolved_ids": ids[:half],
        "unresolved_ids": ids[half:errors], "empty_patch_ids": [], "error_ids": ids[errors:],
        "incomplete_ids": [], "schema_version": 2,
    }  # fmt: skip
    root = folder / "swebench"
    root.mkdir()
    (root / "model.run.json").write_bytes(orjson.dumps(report))
    return root


#: Trials in each Harbor job: small jobs, so that there are many of them to find trials for.
JOB = 10


def harbor_jobs(folder: Path, runs: int) -> Path:
    """Jobs of ``JOB`` trials each (``benchmarks/importers.py``'s job), their trials renamed apart."""
    root = folder / "jobs"
    for k in range(0, runs, JOB):
        job = harbor(root / f"j{k // JOB:04d}", min(JOB, runs - k))
        for trial in list(job.glob("trial-*")):
            name = f"j{k // JOB:04d}-{trial.name}"
            result = orjson.loads((trial / "result.json").read_bytes())
            result.update(id=name, trial_name=name, task_name=f"{name}-task")
            (trial / "result.json").write_bytes(orjson.dumps(result))
            trial.rename(job / name)
    return root


LAYOUTS: dict[str, Callable[[Path, int], Path]] = {
    "terminal-bench": terminal_bench,
    "openhands": openhands,
    "swebench": swebench,
    "harbor": harbor_jobs,
}


def timed(kind: str, runs: int) -> float:
    """The best of three imports of ``runs`` runs of ``kind``, each checked to yield them all."""
    with tempfile.TemporaryDirectory() as folder:
        root = LAYOUTS[kind](Path(folder), runs)
        out = Path(folder) / "runs.jsonl"
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            imported(kind, root, out)
            best = min(best, time.perf_counter() - start)
            assert sum(1 for _ in out.open()) == runs
        return best


def run(kind: str, runs: int) -> None:
    small, large = timed(kind, runs), timed(kind, 4 * runs)
    growth = (large / (4 * runs)) / (small / runs)
    print(f"arena import {kind}: {runs:,} runs {small:.2f} s, {4 * runs:,} runs {large:.2f} s: "
          f"{growth:.2f}x a run's time", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2_500)
    arguments = parser.parse_args()
    for kind in LAYOUTS:
        run(kind, arguments.runs)


if __name__ == "__main__":
    main()
