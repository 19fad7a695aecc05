"""A board too large for the machine is refused, naming its shape, before its arrays are made:
on Linux a large array is granted at once and the process killed by the kernel when it is
written (``arena leaderboard --by model`` of 300,000 runs without a model was killed at 24 GB)."""

from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from arena_core.cli import main
from arena_core.stats import room
from arena_core.stats.rankranges import resampled_scores
from arena_core.stats.tasktable import CELL_BYTES, Runs, TaskTable


def _runs(groups: int, tasks: int, seed: int = 0) -> Runs:
    """One run of each group on each of a few of the tasks (a sparse board, as real ones are)."""
    rng = np.random.default_rng(seed)
    group_of = np.repeat(np.arange(groups), 3)
    task_of = rng.integers(0, tasks, size=len(group_of))
    overall = np.round(rng.uniform(0, 100, size=len(group_of)), 2)
    return Runs(
        [f"r{i}" for i in range(len(group_of))],
        [f"g{g:05d}" for g in group_of],
        [f"t{t:04d}" for t in task_of],
        overall,
        {d: np.round(rng.uniform(0, 100, size=len(group_of)), 2) for d in ("efficiency", "correctness")},
        np.ones(len(group_of)),
    )


def test_the_room_asked_is_refused_with_the_shape_and_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(room, "available_memory", lambda: 10 * 2**20)
    with pytest.raises(room.BoardTooLarge) as refused:
        TaskTable.of(_runs(2_000, 500))
    message = str(refused.value)
    assert message.startswith("a board of 2,000 groups x ") and " tasks needs about " in message
    assert "more than the 0.0 GiB available" in message and "--where" in message
    assert isinstance(refused.value, MemoryError)  # callers that take MemoryError take it
    table = TaskTable.of(_runs(20, 50))  # a small board fits in 10 MiB
    with pytest.raises(room.BoardTooLarge, match="1,000,000 resamples of a board of 20 groups"):
        resampled_scores(table, _Mean(), 1_000_000, seed=0)
    monkeypatch.setattr(room, "available_memory", lambda: None)  # not known: not checked
    assert TaskTable.of(_runs(2_000, 500)).counts.shape[0] == 2_000


class _Mean:
    def aggregate(self, table: TaskTable, weights: np.ndarray) -> np.ndarray:
        return np.asarray((weights @ np.nan_to_num(table.means).T) / len(table.tasks))


def test_the_memory_available_is_read_from_the_system() -> None:
    found = room.available_memory()
    assert found is not None and 0 < found
    total = next(int(line.split()[1]) * 1024 for line in Path("/proc/meminfo").read_text().splitlines()
                 if line.startswith("MemTotal:"))  # fmt: skip
    assert found <= total


def test_the_room_asked_covers_what_the_board_s_statistics_take(monkeypatch: pytest.MonkeyPatch) -> None:
    """The estimate must not be below a board's real peak, or a board it lets through is killed:
    the traced peak of a leaderboard's statistics (table, intervals, rank ranges, inversions) on
    boards of many groups stays below the rooms asked (each is asked of the memory then available)."""
    from arena_core.stats.leaderboard import leaderboard
    from arena_plugins.aggregators import TaskMean
    from arena_plugins.intervals import StudentT

    asked: list[float] = []

    def record(needed: float, what: str) -> None:
        asked.append(needed)

    monkeypatch.setattr("arena_core.stats.tasktable.ensure_room", record)
    monkeypatch.setattr("arena_core.stats.rankranges.ensure_room", record)
    for groups, tasks in ((3_000, 40), (1_500, 200)):
        runs = _runs(groups, tasks)
        asked.clear()
        tracemalloc.start()
        try:
            table = TaskTable.of(runs)
            leaderboard(table, TaskMean(), StudentT(), min_tasks=1)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(asked) == 2 and peak <= sum(asked), (groups, tasks, peak, asked)  # the table's, the resamples'
        assert max(asked) >= groups * tasks * CELL_BYTES


def test_a_command_on_a_board_too_large_says_so_in_one_line_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs that name no model are each a group of their own: by model, 600 runs over 200 tasks
    are a board of 600 groups. With less memory than it needs, each command says which board
    and what to do, and a report writes no page. ``arena tasks`` fits only the cells that hold
    runs: it needs no such board and lists the tasks."""
    runs = tmp_path / "runs.jsonl"
    tasks = [{"id": f"t{i:03d}", "category": "debugging", "difficulty": "beginner"} for i in range(200)]
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    rng = np.random.default_rng(1)
    runs.write_text("".join(
        json.dumps({"id": f"r{i}", "task_id": f"t{i % 200:03d}", "tool": "aider", "total_tokens": int(rng.integers(1e3, 1e5)),
                    "tool_calls": 5, "iterations": 2, "execution_time": 30.0, "estimated_cost": 0.1,
                    "success": bool(rng.integers(0, 2))}) + "\n"
        for i in range(600)
    ))  # fmt: skip
    common = [str(runs), "--tasks", str(tmp_path / "tasks.json"), "--by", "model"]
    fits = CliRunner().invoke(main, ["leaderboard", *common])
    assert fits.exit_code == 0 and "(unknown model: r599)" in fits.output  # the attack: 600 groups
    monkeypatch.setattr(room, "available_memory", lambda: 2**20)
    for command in (["leaderboard"], ["compare", "--b", "log-tokens"], ["report", "-o", str(tmp_path / "site")]):
        result = CliRunner().invoke(main, [*command, *common])
        assert result.exit_code == 2, (command, result.output)
        [line] = result.stderr.splitlines()
        assert line.startswith(f"Error: arena {command[0]}: a board of 600 groups x 200 tasks needs about "), line
        assert line.endswith("--where, --task or --category; nothing was written"), line
    assert not (tmp_path / "site").exists() or not any((tmp_path / "site").iterdir())
    listed = CliRunner().invoke(main, ["tasks", *common, "--format", "json", "-q"])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)["rows"]
    assert len(rows) == 200 and all(math.isfinite(row["difficulty"]) for row in rows)
