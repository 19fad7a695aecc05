"""Tasks in time: a task's ``created_at`` and the boards' windows on it (docs/time.md)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena_core.cli import main
from arena_core.model.errors import ValidationError
from arena_core.model.records import Task
from arena_core.model.serde import structure


@pytest.fixture
def dated(tmp_path: Path) -> Path:
    """40 problems published from January to December 2025 (every tenth undated), two models."""
    rng = random.Random(2)
    tasks = [{"id": f"p{k}", "success_criteria": [{"type": "no_errors"}],
              **({"created_at": f"2025-{k % 12 + 1:02d}-15"} if k % 10 else {})} for k in range(40)]  # fmt: skip
    runs = [{"id": f"{m}-{t['id']}", "task_id": t["id"], "tool": "agent", "model": m, "success": rng.random() < 0.5}
            for m in ("a", "b") for t in tasks]  # fmt: skip
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    return tmp_path


def test_a_window_scores_each_model_on_the_problems_published_in_it(dated: Path) -> None:
    """LiveCodeBench's rule: the mean pass rate over the problems whose date falls in the window
    (both ends inclusive, a date covering its day), computed here from the files directly."""
    done = CliRunner().invoke(main, ["-p", "correctness-only", "leaderboard", str(dated / "runs.jsonl"), "--tasks",
                                     str(dated / "tasks.json"), "--by", "model", "--since", "2025-03-15", "--until",
                                     "2025-06-15", "--format", "json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    tasks = {t["id"]: t for t in json.loads((dated / "tasks.json").read_text())}
    inside = {t for t, task in tasks.items() if "2025-03-15" <= task.get("created_at", "") <= "2025-06-15"}
    runs = [json.loads(line) for line in (dated / "runs.jsonl").read_text().splitlines()]
    for row in json.loads(done.stdout):
        mine = [r for r in runs if r["model"] == row["group"] and r["task_id"] in inside]
        assert row["n_tasks"] == len(inside) == 14
        assert row["means"]["correctness"] == pytest.approx(100 * sum(r["success"] for r in mine) / len(mine))
    assert "note: 4 tasks have no created_at and are in no window (--since 2025-03-15 --until 2025-06-15)" in done.stderr


def test_windows_are_checked_and_an_empty_window_is_refused(dated: Path) -> None:
    base = ["leaderboard", str(dated / "runs.jsonl"), "--tasks", str(dated / "tasks.json")]
    bad = CliRunner().invoke(main, [*base, "--since", "yesterday"])
    assert bad.exit_code == 2 and "expected an ISO-8601 date or time" in bad.output
    empty = CliRunner().invoke(main, [*base, "--since", "2030-01-01"])
    assert empty.exit_code == 2 and "--since 2030-01-01: no task was created in it" in empty.output
    with pytest.raises(ValidationError, match="created_at"):
        structure({"id": "t", "created_at": "last spring"}, Task)
