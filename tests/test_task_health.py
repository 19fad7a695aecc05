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


def _one_task_at_a_time(runs, meta):  # the definition, task by task: what the rows must equal
    solved = (np.nan_to_num(runs.dimensions["correctness"]) >= 100.0) * 1.0
    groups, tasks = np.array(runs.groups, dtype=object), np.array(runs.tasks, dtype=object)
    overall = {g: solved[groups == g].mean() for g in set(runs.groups)}
    found = {}
    for task in sorted(set(runs.tasks)):
        mine = tasks == task
        verdicts, members = solved[mine], groups[mine]
        rates = {g: float(verdicts[members == g].mean()) for g in sorted(set(members.tolist()))}
        scores = np.array([overall[g] for g in members])
        r = np.nan if len(verdicts) < 2 or verdicts.std() == 0 or scores.std() == 0 else pointbiserialr(verdicts, scores)[0]
        flaky = any(0 < rate < 1 and (members == g).sum() >= 2 for g, rate in rates.items())
        errors = any("harness_error" in (meta.get(runs.ids[i], {}).get("flags") or ()) for i in np.flatnonzero(mine))
        found[task] = (int(mine.sum()), rates, float(verdicts.mean()), float(runs.overall[mine].mean()), r, flaky, errors)
    return found


def test_the_rows_equal_the_definition_task_by_task_on_random_boards() -> None:
    """Task health is computed for every task at once (sorted codes and sums); each row equals
    the per-task computation of its definition on random boards with repeats, missing cells,
    constant tasks and flagged runs."""
    from arena_core.stats.tasktable import Runs

    for seed in range(5):
        rng = np.random.default_rng(seed)
        size = 3000
        groups = [f"g{k}" for k in rng.integers(0, 12, size)]
        tasks = [f"t{k:03d}" for k in rng.integers(0, 300, size)]
        correctness = np.where(rng.random(size) < 0.5, 100.0, rng.choice([0.0, 50.0], size))
        correctness[np.array([t < "t030" for t in tasks])] = 100.0  # saturated tasks
        runs = Runs([f"r{i}" for i in range(size)], groups, tasks, rng.random(size) * 100, {"correctness": correctness},
                    np.ones(size))  # fmt: skip
        meta = {f"r{i}": {"flags": ["harness_error"]} for i in range(0, size, 97)}
        rows = task_health(runs, meta)
        expected = _one_task_at_a_time(runs, meta)
        assert [r.task for r in rows] == list(expected)
        for row in rows:
            n, rates, rate, mean, r, flaky, errors = expected[row.task]
            assert (row.runs, row.group_solve_rates, row.groups) == (n, rates, len(rates))
            assert row.solve_rate == pytest.approx(rate, abs=1e-12) and row.mean_score == pytest.approx(mean, abs=1e-9)
            assert (np.isnan(row.discrimination) and np.isnan(r)) or row.discrimination == pytest.approx(r, abs=1e-9)
            assert ("flaky" in row.flags) == flaky and ("harness_errors" in row.flags) == errors
            assert ("saturated" in row.flags) == (rate == 1.0) and ("unsolved" in row.flags) == (rate == 0.0)
    assert task_health(Runs([], [], [], np.zeros(0), {"correctness": np.zeros(0)}, np.zeros(0))) == []


def test_flags_are_found_as_looking_up_each_run_s_meta_finds_them() -> None:
    """The importers' flags are looked for once over the metas, and the runs walked only when
    some have flags; per kind, per run, the answer is that of reading each run's meta in turn,
    whatever its meta holds (none, no flags, flags of another kind or shape, several kinds)."""
    import random

    from arena_core.stats.taskhealth import HARNESS_ERRORS, _flagged
    from arena_core.stats.tasktable import Runs

    rng = random.Random(2)
    names = [*sorted(HARNESS_ERRORS), "step_limit", "not_graded", "other"]
    for trial in range(200):
        ids = [f"r{k}" for k in range(rng.randint(0, 30))]
        meta = {}
        for ident in ids + ["stranger"]:
            shape = rng.random()
            if shape < 0.2:
                continue  # no meta for the run
            if shape < 0.3:
                meta[ident] = None if trial % 2 else {}
            elif shape < 0.4:
                meta[ident] = {"flags": rng.choice([None, "step_limit", {"step_limit": 1}, []])}
            else:
                meta[ident] = {"flags": rng.sample(names, rng.randint(0, 3)), "run_id": "x"}
        runs = Runs(ids, ["g"] * len(ids), ["t"] * len(ids), np.zeros(len(ids)), {}, np.ones(len(ids)))
        kinds = (HARNESS_ERRORS, frozenset({"step_limit"}))
        found = _flagged(runs, None if trial % 17 == 0 else meta, *kinds)
        for kind, got in zip(kinds, found, strict=True):
            expected = [
                float(trial % 17 != 0 and isinstance(f := ((meta.get(i) or {}).get("flags") or ()), (list, tuple))
                      and bool(kind.intersection(f)))
                for i in ids
            ]  # fmt: skip
            assert got.tolist() == expected, (trial, kind)
