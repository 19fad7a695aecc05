"""``arena import`` of many runs against reading and parsing the same files: a mini-swe-agent
folder of trajectories (the sample of ``tests/data/formats/mini-swe-agent``, one per instance)
and a Harbor job of trials (``tests/data/formats/harbor-current``'s continued trial: a
``result.json`` and two ATIF trajectories a trial), copied under new names, with the job's
``result.json`` beside them.

    python benchmarks/importers.py                # 10,000 of each
    python benchmarks/importers.py --runs 2000

The reference walks the folder (``os.walk``), reads every JSON file and decodes it with orjson:
what any importer must do before it reads a field. arena-core's import runs in the same process
to a JSON Lines file, as ``arena import FORMAT FOLDER -o FILE``; the two take turns three times
and the medians are printed, with their ratio (target: within 2x).

Telling the folder's format (``arena leaderboard FOLDER`` without ``--from``: every importer
asked) is measured the same way, against walking the folder and reading each file's first
64 KB once: what one pass that looks at every file's head must do.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SAMPLES = ROOT / "tests" / "data" / "formats"


def mini_swe_agent(folder: Path, runs: int) -> Path:
    """``runs`` trajectories, 500 to a folder, each its own instance."""
    trajectory = orjson.loads((SAMPLES / "mini-swe-agent" / "django__django-16255.traj.json").read_bytes())
    root = folder / "mini"
    for i in range(runs):
        trajectory["instance_id"] = instance = f"django__django-{i:06d}"
        place = root / f"batch{i // 500:03d}" / instance
        place.mkdir(parents=True)
        (place / f"{instance}.traj.json").write_bytes(orjson.dumps(trajectory))
    return root


def harbor(folder: Path, runs: int) -> Path:
    """A job of ``runs`` trials, each the continued trial under its own name and task, with the
    job's own ``result.json`` beside them, as Harbor writes it (its totals those of the trials):
    the importer checks the totals against the trials."""
    sample = SAMPLES / "harbor-current" / "continued__e1"
    result = orjson.loads((sample / "result.json").read_bytes())
    root = folder / "job"
    for i in range(runs):
        name = f"trial-{i:06d}__x"
        shutil.copytree(sample / "agent", root / name / "agent")
        result.update(id=f"trial-{i:06d}", trial_name=name, task_name=f"task-{i:06d}")
        (root / name / "result.json").write_bytes(orjson.dumps(result))
    job = orjson.loads((SAMPLES / "harbor-current" / "result.json").read_bytes())
    usage = result["agent_result"]
    job["n_total_trials"] = runs
    job["stats"].update(
        n_completed_trials=runs, n_errored_trials=0, evals={},
        **{key: usage[key] * runs for key in ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd")},
    )  # fmt: skip
    (root / "result.json").write_bytes(orjson.dumps(job))
    return root


def reference(root: Path) -> int:
    """Every JSON file under ``root`` read and decoded."""
    decoded = 0
    for folder, _, names in os.walk(root):
        for name in names:
            if name.endswith(".json"):
                decoded += len(orjson.loads(Path(folder, name).read_bytes()))
    return decoded


def heads(root: Path) -> int:
    """Every file under ``root`` opened once and its first 64 KB read."""
    read = 0
    for folder, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(folder, name), "rb") as file:
                read += len(file.read(1 << 16))
    return read


def detected(root: Path, importers: list[Any]) -> str | None:
    from arena_core.importing.collect import detect_format

    return detect_format(importers, [root])


def imported(kind: str, root: Path, out: Path) -> None:
    from click.testing import CliRunner

    from arena_core.cli import main

    result = CliRunner().invoke(main, ["import", kind, str(root), "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def run(kind: str, runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = (mini_swe_agent if kind == "mini-swe-agent" else harbor)(Path(folder), runs)
        out = Path(folder) / "runs.jsonl"
        imported(kind, root, out)
        assert sum(1 for _ in out.open()) == runs
        mine, base = [], []
        for _ in range(3):  # alternating, so that both see the same machine and page cache
            start = time.perf_counter()
            imported(kind, root, out)
            mine.append(time.perf_counter() - start)
            start = time.perf_counter()
            reference(root)
            base.append(time.perf_counter() - start)
        a, b = statistics.median(mine), statistics.median(base)
        print(f"arena import {kind}, {runs:,} runs: {a:.2f} s; reading and decoding the same files {b:.2f} s: "
              f"{a / b:.2f}x", flush=True)  # fmt: skip
        from arena_core import Arena

        importers = list(Arena().components.importers.values())  # made once, as a command makes them
        assert detected(root, importers) == kind
        mine, base = [], []
        for _ in range(3):
            start = time.perf_counter()
            detected(root, importers)
            mine.append(time.perf_counter() - start)
            start = time.perf_counter()
            heads(root)
            base.append(time.perf_counter() - start)
        a, b = statistics.median(mine), statistics.median(base)
        print(f"  telling the format: {a:.2f} s; reading each file's head once {b:.2f} s: {a / b:.2f}x", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    arguments = parser.parse_args()
    for kind in ("mini-swe-agent", "harbor"):
        run(kind, arguments.runs)


if __name__ == "__main__":
    main()
