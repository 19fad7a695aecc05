"""The arena command, driven through its entry point on real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena_core.cli import main
from arena_core.examples import SUBMISSIONS, TASKS


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena_core", *args], capture_output=True, text=True)


def test_leaderboard_on_the_bundled_example_ranks_all_five_tools() -> None:
    result = run("leaderboard", "--example")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["Rank", "Tool", "N", "Overall", "95%", "CI", "Efficiency", "Speed", "Cost", "Correctness"]
    body = [line.split() for line in lines[2:]]
    assert len(body) == 5 and [row[0] for row in body][0] == "1"
    overall = [float(row[3]) for row in body]
    assert overall == sorted(overall, reverse=True)
    assert sum(int(row[2]) for row in body) == 180


def test_score_emits_one_evaluation_per_submission_in_input_order(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["score", str(SUBMISSIONS), "--tasks", str(TASKS)])
    assert result.exit_code == 0, result.output
    evaluations = [json.loads(line) for line in result.output.splitlines()]
    ids = [json.loads(line)["id"] for line in SUBMISSIONS.read_text().splitlines()]
    assert [e["submission_id"] for e in evaluations] == ids
    assert all(1 <= e["overall_ranking"] <= 15 for e in evaluations)


def test_per_task_submission_view_is_ranked(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["leaderboard", "--example", "--by", "submission", "--task", "debugging-009"])
    assert result.exit_code == 0
    ranks = [int(line.split()[1]) for line in result.output.splitlines()[2:]]
    assert ranks == sorted(ranks) and ranks[0] == 1 and len(ranks) == 15


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "a", "task_id": "frontend-001", "total_tokens": 5, "tool_calls": 1}\n{"id": "b", "total_tokens": -3}\n',
         "subs.jsonl:2: submission 'b': total_tokens: expected a finite number >= 0, got -3"),
        ('{"id": "a"\n', "subs.jsonl:1: invalid JSON"),
        ("", "subs.jsonl: the file is empty"),
        ('{"id": "a", "task_id": "nope", "total_tokens": 5, "tool_calls": 1}\n',
         "submission 'a': task_id: expected one of the given tasks"),
    ],
)
def test_bad_input_is_one_line_with_exit_status_2(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "subs.jsonl"
    path.write_text(content)
    result = run("score", str(path), "--tasks", str(TASKS))
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_missing_file_is_reported_without_traceback(tmp_path: Path) -> None:
    result = run("score", str(tmp_path / "absent.jsonl"), "--tasks", str(TASKS))
    assert result.returncode == 2 and "absent.jsonl: cannot read" in result.stderr


def test_usage_error_without_inputs() -> None:
    result = run("leaderboard")
    assert result.returncode == 2 and "--example" in result.stderr


def test_plugins_lists_builtins_with_all_and_json() -> None:
    assert CliRunner().invoke(main, ["plugins"]).output.strip() == "No third-party plugins installed."
    listed = json.loads(CliRunner().invoke(main, ["plugins", "--all", "--json"]).output)
    assert [p["name"] for p in listed] == ["metrics", "checkers", "weights", "difficulty", "intervals"]
    assert listed[1]["components"]["checkers"] == ["file_exists", "no_errors", "min_functionality", "tests_pass"]
