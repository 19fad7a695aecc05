"""``arena tasks``: task health flags on a fixture built to have them, discrimination against
SciPy's point-biserial correlation, and the Terminal-Bench sample."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pointbiserialr

from arena_core import Arena
from arena_core.stats.runs import gather_runs
from arena_core.stats.taskhealth import task_health

FORMATS = Path(__file__).parent / "data" / "formats"
#: tool -> task -> verdicts of its attempts: built so that each task has the flags named after it.
DESIGN = {
    "strong": {"unsolved": [0, 0], "saturated": [1, 1], "flaky": [1, 0, 1], "sharp": [1, 1], "dull": [1, 1],
               "broken": [1, 1]},
    "medium": {"unsolved": [0, 0], "saturated": [1, 1], "flaky": [1, 1, 1], "sharp": [1, 0], "dull": [1, 1],
               "broken": [0, 1]},
    "weak": {"unsolved": [0, 0], "saturated": [1, 1], "flaky": [0, 0, 0], "sharp": [0, 0], "dull": [1, 1],
             "broken": [0, 0]},
}


def _runs() -> list[dict]:
    out = []
    for tool, tasks in DESIGN.items():
        for task, verdicts in tasks.items():
            for a, ok in enumerate(verdicts):
                flags = ["verdict_missing"] if task == "broken" and tool == "weak" and a == 0 else []
                out.append({"id": f"{tool}-{task}-{a}", "task_id": task, "tool": tool, "total_tokens": 10,
                            "tool_calls": 1, "correctness": float(ok), "meta": {"flags": flags}})
    return out


TASKS = {t: {"id": t, "success_criteria": [{"type": "tests_pass"}]} for t in DESIGN["strong"]}


def test_the_flags_are_exactly_the_ones_built_in() -> None:
    arena = Arena({"missing": dict.fromkeys(("total_tokens", "tool_calls"), "reweight")}, autoload=False)
    runs = _runs()
    meta = {r["id"]: r["meta"] for r in runs}
    rows = {r.task: r for r in task_health(gather_runs(arena.scorer, arena.evaluate_many(runs, TASKS), "tool",
                                                       meta=meta), meta)}
    assert {t for t, r in rows.items() if "unsolved" in r.flags} == {"unsolved"}
    assert {t for t, r in rows.items() if "saturated" in r.flags} == {"saturated", "dull"}
    assert {t for t, r in rows.items() if "flaky" in r.flags} == {"flaky", "sharp", "broken"}
    assert {t for t, r in rows.items() if "harness_errors" in r.flags} == {"broken"}
    assert "undiscriminating" not in rows["sharp"].flags and "undiscriminating" in rows["dull"].flags
    assert rows["sharp"].group_solve_rates == {"medium": 0.5, "strong": 1.0, "weak": 0.0}
    assert rows["flaky"].solve_rate == pytest.approx(5 / 9) and rows["flaky"].runs == 9


def test_the_api_gives_the_same_rows_from_evaluations_and_from_a_store(tmp_path) -> None:
    from arena_core.store import SQLiteStore

    arena = Arena({"missing": dict.fromkeys(("total_tokens", "tool_calls"), "reweight")}, autoload=False)
    runs = _runs()
    meta = {r["id"]: r["meta"] for r in runs}
    given = arena.task_health(arena.evaluate_many(runs, TASKS), meta=meta)
    store = SQLiteStore(tmp_path / "arena.db")
    arena.process(runs, store=store, tasks=TASKS)
    stored = arena.task_health(store=store)  # the flags come from the stored submissions' meta
    assert [(r.task, r.runs, r.solve_rate, r.flags) for r in stored] == [(r.task, r.runs, r.solve_rate, r.flags)
                                                                          for r in given]
    assert [r.task for r in stored if "harness_errors" in r.flags] == ["broken"]


def test_discrimination_is_scipys_point_biserial_correlation() -> None:
    arena = Arena({"missing": dict.fromkeys(("total_tokens", "tool_calls"), "reweight")}, autoload=False)
    runs = _runs()
    rows = {r.task: r for r in task_health(gather_runs(arena.scorer, arena.evaluate_many(runs, TASKS), "tool"))}
    overall = {tool: np.mean([v for verdicts in tasks.values() for v in verdicts]) for tool, tasks in DESIGN.items()}
    for task in ("flaky", "sharp", "broken"):
        verdicts = [v for tool in DESIGN for v in DESIGN[tool][task]]
        rates = [overall[tool] for tool in DESIGN for _ in DESIGN[tool][task]]
        assert rows[task].discrimination == pytest.approx(pointbiserialr(verdicts, rates).statistic, abs=1e-12)


def test_the_terminal_bench_sample(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "arena_core", "-p", "gated", "tasks",
                           "harbor-terminal-bench/tb.run.droid-gpt-5.results.json", "--format", "json"],
                          cwd=FORMATS, capture_output=True, text=True, env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    published = json.loads((FORMATS / "harbor-terminal-bench" / "tb.run.droid-gpt-5.results.json").read_text())
    assert len(rows) == 80 and sum("saturated" in r["flags"] for r in rows) == published["n_resolved"] == 39
    assert sum("unsolved" in r["flags"] for r in rows) == published["n_unresolved"] == 41
    missing = {r["task_id"] for r in published["results"] if r.get("is_resolved") is None}
    assert {r["task"] for r in rows if "harness_errors" in r["flags"]} == missing and len(missing) == 3
    table = subprocess.run([sys.executable, "-m", "arena_core", "-p", "gated", "tasks",
                            "harbor-terminal-bench/tb.run.droid-gpt-5.results.json", "--format", "csv"],
                           cwd=FORMATS, capture_output=True, text=True).stdout
    assert table.splitlines()[0] == "Task,Runs,Groups,Solved %,Mean,Discrimination,Difficulty,Flags" and len(table.splitlines()) == 81
