"""Runs are chosen before they are checked: --task, --category and --where leave out runs and
tasks that are then neither validated nor counted; infra_failures = "exclude" leaves out the
runs importers flag as harness errors, says how many, and is recorded in the provenance."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from clirun import run_arena

from arena_core import Arena
from arena_core.model.errors import ValidationError
from arena_core.store import SQLiteStore

FORMATS = Path(__file__).parent / "data" / "formats"
TB_RUN = "harbor-terminal-bench/tb.run.droid-gpt-5.results.json"
ENV = {**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"}


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_arena(*args, cwd=cwd)


def _run(ident: str, task: str, tool: str, **extra: object) -> dict:
    return {"id": ident, "task_id": task, "tool": tool, "total_tokens": 1000, "tool_calls": 5, "correctness": 1.0,
            **extra}


@pytest.fixture
def arena_files(tmp_path: Path) -> Path:
    """Three tools on two good tasks, plus a task whose criterion type no plugin knows and a run
    of a held-out split whose token count is not a number."""
    runs = [_run(f"{tool}-{t}", t, tool, meta={"split": "test"}) for tool in ("a", "b", "c") for t in ("t1", "t2", "t3")]
    runs.append(_run("odd-run", "t1", "a", total_tokens="lots", meta={"split": "dev"}))
    runs.append(_run("on-bad-task", "bad", "a", meta={"split": "test"}))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    tasks = [{"id": t, "category": "debugging"} for t in ("t1", "t2", "t3")]
    tasks.append({"id": "bad", "category": "refactoring", "success_criteria": [{"type": "no_such_check"}]})
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    return tmp_path


def test_runs_and_tasks_left_out_are_not_checked(arena_files: Path) -> None:
    whole = arena("leaderboard", "runs.jsonl", "--tasks", "tasks.json", cwd=arena_files)
    assert whole.returncode != 0 and "no_such_check" in whole.stderr  # the attack on the check ran
    by_category = arena("leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--category", "debugging", cwd=arena_files)
    assert by_category.returncode != 0 and "lots" in by_category.stderr and "runs.jsonl:10" in by_category.stderr
    chosen = arena("leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--category", "debugging",
                   "--where", "meta.split=test", "--format", "json", cwd=arena_files)
    assert chosen.returncode == 0, chosen.stderr
    rows = json.loads(chosen.stdout)["rows"]
    assert {r["group"]: r["n_runs"] for r in rows} == {"a": 3, "b": 3, "c": 3}
    for command in (["tasks"], ["pareto", "--x", "tokens"]):
        done = arena(*command, "runs.jsonl", "--tasks", "tasks.json", "--task", "t1", "--task", "t2",
                     "--where", "meta.split=test", "--format", "json", cwd=arena_files)
        assert done.returncode == 0, (command, done.stderr)
        assert "bad" not in done.stdout and "t3" not in done.stdout or command == ["pareto", "--x", "tokens"]


def test_a_choice_that_keeps_nothing_says_so(arena_files: Path) -> None:
    done = arena("leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--task", "t1",
                 "--where", "meta.split=train", cwd=arena_files)
    assert done.returncode == 2 and "runs.jsonl: no run is kept by --task t1 --where meta.split=train" in done.stderr
    assert "Traceback" not in done.stderr


def test_excluded_harness_errors_leave_the_denominator_and_are_counted(tmp_path: Path) -> None:
    published = json.loads((FORMATS / TB_RUN).read_text())
    verdictless = sum(r.get("is_resolved") is None for r in published["results"])
    counted = arena("-p", "correctness-only", "leaderboard", TB_RUN, "--format", "json", cwd=FORMATS)
    assert counted.returncode == 0, counted.stderr
    (row,) = json.loads(counted.stdout)["rows"]
    assert row["n_runs"] == 80 and row["score"] == pytest.approx(100 * published["accuracy"])
    (tmp_path / "arena.toml").write_text('infra_failures = "exclude"\n')
    left_out = arena("-c", str(tmp_path / "arena.toml"), "-p", "correctness-only", "leaderboard", TB_RUN,
                     "--format", "json", cwd=FORMATS)
    assert left_out.returncode == 0, left_out.stderr
    (row,) = json.loads(left_out.stdout)["rows"]
    assert verdictless == 3 and row["n_runs"] == 80 - verdictless
    assert row["score"] == pytest.approx(100 * published["n_resolved"] / (80 - verdictless))
    assert "note: 3 runs flagged as harness errors left out (infra_failures = exclude)" in left_out.stderr
    tasks = arena("-c", str(tmp_path / "arena.toml"), "-p", "gated", "tasks", TB_RUN, "--format", "json", cwd=FORMATS)
    assert not any("harness_errors" in r["flags"] for r in json.loads(tasks.stdout)["rows"])


def _flagged_runs() -> tuple[list[dict], dict]:
    runs = [_run(f"{tool}-{t}", t, tool, meta={"flags": ["harness_error"] if (tool, t) == ("a", "t1") else []},
                 correctness=0.0 if (tool, t) == ("a", "t1") else 1.0)
            for tool in ("a", "b") for t in ("t1", "t2", "t3")]
    return runs, {t: {"id": t} for t in ("t1", "t2", "t3")}


def test_the_api_leaves_them_out_given_the_meta_and_refuses_to_guess_without_it(tmp_path: Path) -> None:
    runs, tasks = _flagged_runs()
    excluding = Arena({"infra_failures": "exclude"}, autoload=False)
    evaluations = excluding.evaluate_many(runs, tasks)
    assert {e.provenance.algorithms["infra_failures"] for e in evaluations} == {"exclude"}
    assert Arena(autoload=False).evaluate_many(runs, tasks)[0].provenance.algorithms["infra_failures"] == "fail"
    with pytest.raises(ValidationError, match="infra_failures = exclude"):
        excluding.leaderboard(evaluations)
    meta = {r["id"]: r["meta"] for r in runs}
    board = {row.group: row for row in excluding.leaderboard(evaluations, meta=meta)}
    assert board["a"].n_runs == 2 and board["b"].n_runs == 3
    store = SQLiteStore(tmp_path / "arena.db")
    excluding.process(runs, store=store, tasks=tasks)
    stored = {row.group: row.n_runs for row in excluding.leaderboard(store=store)}
    assert stored == {"a": 2, "b": 3}
    assert {row.group: row.n_runs for row in Arena(autoload=False).leaderboard(store=store)} == {"a": 3, "b": 3}


def test_a_record_s_flags_are_read_where_its_meta_will_hold_them() -> None:
    """Whether a record is set aside as ungraded is looked up without building its meta, and
    equals asking of the meta its submission will have (its ``meta`` object over its own keys),
    whatever holds the flag: the meta, the record, both, neither, or a value of another kind."""
    from itertools import product

    from arena_core.cli.picking import _meta_of, _ungraded
    from arena_core.importing.runs import VERDICT_CRITERION
    from arena_core.model.records import Task
    from arena_core.model.serde import structure
    from arena_core.stats.runs import ungraded

    verdict_only = structure({"id": "t", "success_criteria": [{"type": VERDICT_CRITERION, "description": "x"}]}, Task)
    tasks = {"t": verdict_only, "open": structure({"id": "open"}, Task)}
    flags = [None, ["not_graded"], ["x"], "not_graded", ("not_graded",), {"not_graded": 1}]
    metas = [None, "text", {}, {"flags": None}, *({"flags": f} for f in flags[1:])]
    seen = set()
    for meta, own, task in product(metas, flags, ["t", "open", "gone", None]):
        record = {"id": "r", "tool": "a", **({"task_id": task} if task else {})}
        record |= {"meta": meta} if meta is not None else {}
        record |= {"flags": own} if own is not None else {}
        expected = False if task == "gone" else ungraded(_meta_of(record), tasks.get(task) if task else None)
        assert _ungraded(record, tasks) is expected, record
        seen.add((task, expected))
    assert {("t", True), ("t", False), ("open", False), (None, True)} <= seen


@pytest.mark.parametrize("spelled", ["not_graded", "not\\u005fgraded"])
def test_a_file_s_ungraded_runs_are_set_aside_however_the_flag_is_spelled(tmp_path: Path, spelled: str) -> None:
    """A file is looked through for ungraded runs only where its bytes may name the flag; JSON
    may spell it with an escape, which a scan for the plain name misses (the run was then read
    straight into columns and ranked as a failure). Both spellings are set aside; a file that
    names no flag is not looked through and ranks every run."""
    from arena_core.importing.runs import VERDICT_CRITERION

    runs = [_run(f"{tool}-{t}", t, tool, correctness=1.0) for tool in ("a", "b") for t in ("t1", "t2")]
    lines = [json.dumps(r) for r in runs]
    lines[0] = lines[0][:-1] + f', "meta": {{"flags": ["{spelled}"]}}}}'
    (tmp_path / "runs.jsonl").write_text("\n".join(lines) + "\n")
    assert json.loads(lines[0])["meta"]["flags"] == ["not_graded"]
    tasks = [{"id": t, "success_criteria": [{"type": VERDICT_CRITERION, "description": "x"}]} for t in ("t1", "t2")]
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    done = arena("leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert {r["group"]: r["n_runs"] for r in json.loads(done.stdout)["rows"]} == {"a": 1, "b": 2}
    assert "note: 1 run has no verdict (flagged not_graded) and is not ranked (a / (unknown): 1)" in done.stderr
    (tmp_path / "runs.jsonl").write_text("\n".join(json.dumps(r) for r in runs) + "\n")
    whole = arena("leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--format", "json", cwd=tmp_path)
    assert {r["group"]: r["n_runs"] for r in json.loads(whole.stdout)["rows"]} == {"a": 2, "b": 2}
