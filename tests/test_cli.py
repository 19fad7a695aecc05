"""The arena command, driven through its entry point on real files."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from clirun import run_arena

from arena_core import Arena, to_dict
from arena_core.examples import SUBMISSIONS, TASKS
from arena_core.examples.synthetic import generate_arena

PLANTED = {json.loads(line)["id"] for line in SUBMISSIONS.read_text().splitlines() if "planted_outlier" in line}


def arena(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return run_arena(*args, cwd=cwd, env=env)


def in_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` run in this process, in ``cwd``: for commands that start nothing and only
    print (a process each costs a second of imports)."""
    import contextlib

    from click.testing import CliRunner

    from arena_core.cli import main

    with contextlib.chdir(cwd):
        result = CliRunner().invoke(main, list(args))
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """An empty directory to run in, so no configuration file is found by accident."""
    return tmp_path


# ---------------------------------------------------------------------------
# leaderboard
# ---------------------------------------------------------------------------


def test_leaderboard_ranks_all_five_tools_with_intervals(workdir: Path) -> None:
    result = arena("leaderboard", "--example", cwd=workdir)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["Rank", "Tier", "Tool", "Runs", "Tasks", "Score", "95%", "CI", "Ranks", "Coverage",
                                "Efficiency", "Speed", "Cost", "Correctness"]
    body = [line.split() for line in lines[2:7]]
    assert len(body) == 5 and sum(int(row[3]) for row in body) == 180 and {row[4] for row in body} == {"12"}
    scores = [float(row[5]) for row in body]
    assert scores == sorted(scores, reverse=True)
    for row in body:
        low, high = map(float, row[6].split("-"))
        best, worst = map(int, row[7].split("-"))
        assert low < float(row[5]) < high and best <= int(row[0]) <= worst


def test_leaderboard_json_matches_the_python_api(workdir: Path) -> None:
    rows = json.loads(arena("leaderboard", "--example", "--by", "model", "--format", "json", cwd=workdir).stdout)["rows"]
    api = Arena(autoload=False)
    from arena_core.io.readers import read_submissions, read_tasks

    expected = api.leaderboard(api.evaluate_many(read_submissions(SUBMISSIONS), read_tasks(TASKS)), by="model")
    assert rows == [to_dict(g) for g in expected]
    assert [r["rank"] for r in rows] == [1, 2, 3, 4, 5]


def test_provisional_groups_are_marked(workdir: Path) -> None:
    (workdir / "arena.toml").write_text("min_tasks_per_group = 13\n")
    result = arena("leaderboard", "--example", cwd=workdir)
    assert result.returncode == 0
    assert all(" *" in line and line.startswith("   -     -  ") for line in result.stdout.splitlines()[2:7])
    assert "* provisional: fewer than 13 tasks (min_tasks_per_group)" in result.stdout


def test_submission_view_shows_ranks_and_outlier_flags(workdir: Path) -> None:
    task = sorted(PLANTED)[0].split("/")[0]
    result = arena("leaderboard", "--example", "--by", "submission", "--task", task, cwd=workdir)
    assert result.returncode == 0
    rows = result.stdout.splitlines()[2:]
    assert len(rows) == 15 and [int(r.split()[1]) for r in rows][0] == 1
    flagged = [r for r in rows if "extremely_fast" in r]
    assert {r.split()[2] for r in flagged} == {p for p in PLANTED if p.startswith(task + "/")}


def test_unknown_task_filter_is_a_usage_error(workdir: Path) -> None:
    result = arena("leaderboard", "--example", "--task", "nope", cwd=workdir)
    assert result.returncode == 2 and "--task 'nope': no such task" in result.stderr


# ---------------------------------------------------------------------------
# score
# ---------------------------------------------------------------------------


def test_score_jsonl_is_in_input_order(workdir: Path) -> None:
    result = arena("score", str(SUBMISSIONS), "--tasks", str(TASKS), cwd=workdir)
    assert result.returncode == 0, result.stderr
    evaluations = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["submission_id"] for e in evaluations] == [json.loads(l)["id"] for l in SUBMISSIONS.read_text().splitlines()]
    assert all(1 <= e["overall_ranking"] <= 15 for e in evaluations)


@pytest.mark.parametrize("fmt", ["json", "csv", "table"])
def test_score_formats_agree(workdir: Path, fmt: str) -> None:
    jsonl = [json.loads(line) for line in arena("score", "--example", cwd=workdir).stdout.splitlines()]
    out = arena("score", "--example", "--format", fmt, cwd=workdir).stdout
    if fmt == "json":
        def timeless(rows):
            return [{k: v for k, v in r.items() if k != "evaluated_at"} for r in rows]

        assert timeless(json.loads(out)) == timeless(jsonl)
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert [(r["submission_id"], float(r["overall_score"]), int(r["overall_ranking"])) for r in rows] == [
            (e["submission_id"], e["overall_score"], e["overall_ranking"]) for e in jsonl
        ]
    else:
        lines = out.splitlines()
        assert lines[0].split()[:5] == ["Task", "Rank", "Submission", "Tool", "Overall"] and len(lines) == 2 + len(jsonl)


def test_output_file_appears_only_on_success(workdir: Path) -> None:
    target = workdir / "scores.jsonl"
    assert arena("score", "--example", "-o", str(target), cwd=workdir).returncode == 0
    assert len(target.read_text().splitlines()) == 180
    bad = workdir / "bad.jsonl"
    bad.write_text(SUBMISSIONS.read_text() + '{"id": "x", "task_id": "backend-002", "total_tokens": -1, "tool_calls": 1}\n')
    before = target.read_text()
    result = arena("score", str(bad), "--tasks", str(TASKS), "-o", str(target), cwd=workdir)
    assert result.returncode == 2 and target.read_text() == before
    fresh = workdir / "fresh.jsonl"
    assert arena("score", str(bad), "--tasks", str(TASKS), "-o", str(fresh), cwd=workdir).returncode == 2
    assert not fresh.exists() and not list(workdir.glob(".fresh.jsonl.*"))


def test_csv_and_toml_inputs(workdir: Path) -> None:
    tasks = json.loads(TASKS.read_text())
    toml_lines = []
    for t in tasks[:2]:
        toml_lines += ["[[tasks]]", f'id = "{t["id"]}"', f'category = "{t["category"]}"', f'difficulty = "{t["difficulty"]}"', ""]
    (workdir / "tasks.toml").write_text("\n".join(toml_lines))
    subs = [json.loads(l) for l in SUBMISSIONS.read_text().splitlines() if json.loads(l)["task_id"] in {tasks[0]["id"], tasks[1]["id"]}]
    with (workdir / "runs.csv").open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "task_id", "tool", "total_tokens", "tool_calls", "execution_time", "files_created", "meta.note"])
        for s in subs:
            writer.writerow([s["id"], s["task_id"], s["tool"], s["total_tokens"], s["tool_calls"], s.get("execution_time", ""),
                             ";".join(s["files_created"]), "csv"])
    result = arena("score", "runs.csv", "--tasks", "tasks.toml", cwd=workdir)
    assert result.returncode == 0, result.stderr
    got = [json.loads(line) for line in result.stdout.splitlines()]
    records = [{k: v for k, v in s.items() if k in ("id", "task_id", "tool", "total_tokens", "tool_calls", "execution_time", "files_created")}
               for s in subs]
    expected = Arena(autoload=False).evaluate_many(records, {t["id"]: {k: t[k] for k in ("id", "category", "difficulty")} for t in tasks[:2]})
    assert [(g["submission_id"], g["overall_score"]) for g in got] == [(e.submission_id, e.overall_score) for e in expected]


# ---------------------------------------------------------------------------
# bad input: one line, FILE:LINE, exit status 2, no traceback
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("subs.jsonl", '{"id": "a", "task_id": "frontend-001", "total_tokens": 5, "tool_calls": 1}\n{"id": "b", "total_tokens": -3}\n',
         "subs.jsonl:2: submission 'b': total_tokens: expected a finite number >= 0, got -3"),
        ("subs.jsonl", '{"id": "a", "total_tokens": 5}\n{"id": "b"\n', "subs.jsonl:2: invalid JSON"),
        ("subs.jsonl", "", "subs.jsonl: the file is empty"),
        ("subs.jsonl", "\n\n", "subs.jsonl: the file is empty"),
        ("subs.json", '[{"id": "a", "tool_calls": "many"}]', "subs.json: record 1: submission 'a': tool_calls: expected a whole number, got 'many'"),
        ("subs.csv", "id,task_id,total_token,tool_calls\na,frontend-001,5,1\n",
         "subs.csv:1: unknown column 'total_token'; did you mean 'total_tokens'?"),
        ("subs.csv", "id,task_id,total_tokens,tool_calls\na,frontend-001,5,1\nb,frontend-001,lots,1\n",
         "subs.csv:3: submission 'b': total_tokens: expected a whole number, got 'lots'"),
        ("subs.csv", "id,task_id,total_tokens,tool_calls\na,frontend-001,5\n", "subs.csv:2: expected 4 cells as in the header, got 3"),
        ("subs.csv", "", "subs.csv: the file is empty"),
        ("subs.jsonl", '{"id": "a", "task_id": "nope", "total_tokens": 5, "tool_calls": 1}\n',
         "submission 'a': task_id: expected one of the given tasks"),
    ],
)
def test_bad_submission_files(workdir: Path, name: str, content: str, message: str) -> None:
    (workdir / name).write_text(content)
    result = arena("score", name, "--tasks", str(TASKS), cwd=workdir)
    assert result.returncode == 2, result.stdout
    assert message in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("tasks.toml", '[[tasks]]\nid = "t"\ndifficulty = "advanced"\nsuccess_criteria = [{type = "file_exists", file_path = 3}]\n', None),
        ("tasks.toml", '[[tasks]\nid = "t"\n', "tasks.toml: invalid TOML"),
        ("tasks.toml", 'title = "x"\n', "tasks.toml: expected [[tasks]] or [tasks.ID] tables"),
        ("tasks.json", '[{"id": "t", "success_criteria": [{"file_path": "a"}]}]', "tasks.json: task 1: task 't': success_criteria.0: expected a criterion table with a 'type'"),
        ("tasks.json", "", "tasks.json: the file is empty"),
    ],
)
def test_bad_task_files(workdir: Path, name: str, content: str, message: str | None) -> None:
    (workdir / name).write_text(content)
    (workdir / "subs.jsonl").write_text('{"id": "a", "task_id": "t", "total_tokens": 5, "tool_calls": 1, "files_created": ["a"]}\n')
    result = arena("score", "subs.jsonl", "--tasks", name, cwd=workdir)
    if message is None:  # a valid TOML file whose criterion parameter is wrong
        assert result.returncode == 2 and "success_criteria.0.file_path: expected the path of the file" in result.stderr
        return
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_missing_file_and_missing_arguments(workdir: Path) -> None:
    result = arena("score", "absent.jsonl", "--tasks", str(TASKS), cwd=workdir)
    assert result.returncode == 2 and "absent.jsonl: cannot read" in result.stderr
    assert arena("leaderboard", cwd=workdir).returncode == 2
    result = arena("score", str(SUBMISSIONS), cwd=workdir)
    assert result.returncode == 2 and "--tasks is required" in result.stderr


def test_large_file_streams_through(workdir: Path) -> None:
    tasks, subs = generate_arena(tasks=50, submissions_per_task=1000, outliers=20, seed=3)
    (workdir / "tasks.json").write_text(json.dumps(tasks))
    with (workdir / "big.jsonl").open("w") as fh:
        for s in subs:
            fh.write(json.dumps(s) + "\n")
    result = arena("score", "big.jsonl", "--tasks", "tasks.json", "--quiet", "-o", "out.jsonl", cwd=workdir)
    assert result.returncode == 0, result.stderr
    with (workdir / "out.jsonl").open() as fh:
        count = sum(1 for _ in fh)
    assert count == 50_000
    first = json.loads((workdir / "out.jsonl").open().readline())
    assert first["submission_id"] == subs[0]["id"] and 1 <= first["overall_ranking"] <= 1000


# ---------------------------------------------------------------------------
# baseline, outliers, validate, ingest, plugins
# ---------------------------------------------------------------------------


def test_baseline_command_equals_the_api(workdir: Path) -> None:
    lines = [json.loads(l) for l in arena("baseline", "--example", cwd=workdir).stdout.splitlines()]
    assert len(lines) == 12
    from arena_core.io.readers import read_submissions

    subs = read_submissions(SUBMISSIONS)
    first = [s for s in subs if s.task_id == lines[0]["task_id"]]
    expected = to_dict(Arena(autoload=False).compute_baseline(lines[0]["task_id"], first))
    assert {k: v for k, v in lines[0].items() if k != "last_updated"} == {k: v for k, v in expected.items() if k != "last_updated"}


def test_outliers_exit_1_with_the_planted_ones(workdir: Path) -> None:
    result = arena("outliers", "--example", cwd=workdir)
    assert result.returncode == 1
    assert {json.loads(l)["submission_id"] for l in result.stdout.splitlines()} == PLANTED
    assert "3 of 180 submissions flagged" in result.stderr
    clean = workdir / "clean.jsonl"
    clean.write_text("".join(l + "\n" for l in SUBMISSIONS.read_text().splitlines() if "planted_outlier" not in l))
    assert arena("outliers", str(clean), cwd=workdir).returncode == 0


def test_validate_exit_status_follows_findings(workdir: Path) -> None:
    result = arena("validate", "--example", cwd=workdir)
    findings = result.stdout.splitlines()
    assert result.returncode == (1 if findings else 0)
    assert all(": " in f for f in findings)
    one = workdir / "one.jsonl"
    one.write_text('{"id": "tiny", "task_id": "backend-002", "total_tokens": 3, "tool_calls": 0}\n')
    result = arena("validate", str(one), "--tasks", str(TASKS), cwd=workdir)
    assert result.returncode == 1 and "tiny: Suspiciously low token count" in result.stdout


def test_ingest_then_leaderboard_from_the_store(workdir: Path) -> None:
    first = arena("ingest", "--example", "--store", "arena.db", cwd=workdir)
    assert first.returncode == 0, first.stderr
    assert "Stored 180 evaluations for 12 tasks in arena.db; 3 flagged for review" in first.stdout
    refused = arena("ingest", str(SUBMISSIONS), "--store", "arena.db", cwd=workdir)  # the same ids again
    assert refused.returncode == 2
    assert refused.stderr.startswith("Error: ") and len(refused.stderr.splitlines()) == 1
    assert "id: expected an id not yet stored for task" in refused.stderr and "--replace" in refused.stderr
    again = arena("ingest", str(SUBMISSIONS), "--store", "arena.db", "--replace", cwd=workdir)  # tasks already stored
    assert again.returncode == 0, again.stderr
    stored = arena("leaderboard", "--store", "arena.db", cwd=workdir)
    from_files = arena("leaderboard", "--example", cwd=workdir)
    assert stored.returncode == 0 and stored.stdout == from_files.stdout
    assert arena("leaderboard", "--store", "missing.db", cwd=workdir).returncode == 2


def test_plugins_lists_builtins_and_blocked_ones(workdir: Path) -> None:
    assert arena("plugins", cwd=workdir).stdout.strip() == "No third-party plugins installed."
    listed = json.loads(arena("plugins", "--all", "--json", cwd=workdir).stdout)
    assert [p["name"] for p in listed] == ["metrics", "checkers", "weights", "difficulty", "intervals", "runners",
                                           "sandbox", "importers", "aggregators", "executors", "prices", "judges"]
    hook = json.loads(arena("plugins", "--all", "--json", "--hook", "arena_register_weight_profiles", cwd=workdir).stdout)
    assert [p["name"] for p in hook] == ["weights"]
    blocked = arena("plugins", "--all", cwd=workdir, env={"ARENA_DISABLED_PLUGINS": "difficulty"}).stdout
    assert re.search(r"^difficulty +blocked$", blocked, flags=re.M)


# ---------------------------------------------------------------------------
# configuration
# ---------------------------------------------------------------------------


def test_config_init_writes_a_complete_file_that_changes_nothing(workdir: Path) -> None:
    assert arena("config", "init", cwd=workdir).returncode == 0
    text = (workdir / "arena.toml").read_text()
    for key in ("confidence_interval", "baseline_scope", "min_submissions_per_tool", "[metrics]", "[missing]",
                "[default_baseline]", "[weights]", "[category_profiles]", "disabled_plugins", "strict"):
        assert key in text
    with_file = arena("leaderboard", "--example", cwd=workdir).stdout
    (workdir / "arena.toml").unlink()
    assert arena("leaderboard", "--example", cwd=workdir).stdout == with_file
    arena("config", "init", cwd=workdir)
    refused = arena("config", "init", cwd=workdir)
    assert refused.returncode == 2 and "already exists" in refused.stderr
    # Its commented profile example, uncommented, is a working profile.
    text = (workdir / "arena.toml").read_text()
    assert "# [profiles.log-tokens.metrics]\n" in text
    (workdir / "arena.toml").write_text(text.replace("# [profiles.log-tokens.metrics]\n# token_efficiency",
                                                     "[profiles.log-tokens.metrics]\ntoken_efficiency"))
    scored = arena("-p", "log-tokens", "score", "--example", cwd=workdir)
    assert json.loads(scored.stdout.splitlines()[0])["provenance"]["algorithms"]["token_efficiency"] == "token_efficiency_log"


def test_config_show_names_the_source_of_each_value(workdir: Path) -> None:
    (workdir / "arena.toml").write_text('baseline_scope = "task_tool"\n[missing]\ntotal_tokens = "neutral"\n')
    lines = arena("config", "show", cwd=workdir).stdout.splitlines()
    assert lines[0].endswith("arena.toml")
    assert any(l.startswith('baseline_scope = "task_tool"  # ') and l.endswith("arena.toml") for l in lines)
    assert any(l.startswith('missing.total_tokens = "neutral"  #') and l.endswith("arena.toml") for l in lines)
    assert 'missing.tool_calls = "error"  # default' in lines
    assert 'confidence_interval = "spec"  # default' in lines


def test_pyproject_tool_arena_is_found_from_a_subdirectory(workdir: Path) -> None:
    (workdir / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.arena]\nmin_submissions_per_tool = 50\n')
    (workdir / "sub").mkdir()
    shown = arena("config", "show", cwd=workdir / "sub").stdout
    assert "min_submissions_per_tool = 50" in shown and "pyproject.toml" in shown


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('confidence_intervall = "spec"\n', "arena.toml: confidence_intervall: unknown key; did you mean 'confidence_interval'?"),
        ('baseline_scope = "tool"\n', "arena.toml: baseline_scope: expected one of task, task_tool, task_model, task_tool_model, got 'tool'"),
        ('min_submissions_per_tool = "3"\n', "arena.toml: min_submissions_per_tool: expected a whole number, got '3'"),
        ('[missing]\ntotal_tokens = "skip"\n', "arena.toml: missing.total_tokens: expected one of error, neutral, reweight, comparable, got 'skip'"),
        ('[missing]\ntotal_token = "neutral"\n', "arena.toml: missing.total_token: not a submission field; did you mean 'total_tokens'?"),
        ('[metrics]\ntoken_efficiency = "token_eficiency"\n', "no metric named 'token_eficiency' is registered; did you mean 'token_efficiency'?"),
        ('confidence_interval = "bootstrapp"\n', "no interval method named 'bootstrapp' is registered; did you mean 'bootstrap'?"),
        ('[weights.default]\nefficiency = 0.9\n', "weight profile 'default': weights: expected weights that add up to 1"),
        ("metrics = 3\n", "arena.toml: metrics: expected a table ([metrics]), got 3"),
        ('baseline_scope = "task\n', "arena.toml:1: invalid TOML"),
    ],
)
def test_configuration_errors_name_file_key_and_choices(workdir: Path, content: str, message: str) -> None:
    (workdir / "arena.toml").write_text(content)
    result = arena("leaderboard", "--example", cwd=workdir)
    assert result.returncode == 2
    assert message in result.stderr and "arena.toml" in result.stderr
    assert "Traceback" not in result.stderr


def test_explicit_config_option_and_help_examples(workdir: Path) -> None:
    (workdir / "team.toml").write_text("min_tasks_per_group = 40\n")
    assert "* provisional" in arena("-c", "team.toml", "leaderboard", "--example", cwd=workdir).stdout
    for command in ("score", "leaderboard", "pareto", "baseline", "outliers", "validate", "ingest", "plugins"):
        text = in_process(command, "--help", cwd=workdir).stdout
        assert "Example" in text and f"arena {command}" in text
    for command in ("init", "show"):
        assert "Example" in in_process("config", command, "--help", cwd=workdir).stdout


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("tty", "quiet", "shown"), [(True, False, True), (True, True, False), (False, False, False)])
def test_progress_bar_only_on_a_terminal_and_not_quiet(monkeypatch: pytest.MonkeyPatch, tty: bool, quiet: bool, shown: bool) -> None:
    from arena_core.cli import app as cli

    stream = _Terminal() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    with cli.progress(10, "Scoring", quiet) as update:
        update(4)
        update(6)
    assert ("Scoring" in stream.getvalue()) == shown
    if shown:
        assert "100%" in stream.getvalue()
