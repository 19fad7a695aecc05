"""Submissions split over shards: several files, a folder of them, a hive-partitioned dataset;
scored as the one file they came from."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from clirun import run_arena

from arena_core.examples import SUBMISSIONS, TASKS
from arena_core.io.decoding import InputError
from arena_core.io.shards import partition_keys, read_shard_table, shard_files

ROWS = [json.loads(line) for line in Path(SUBMISSIONS).read_text().splitlines()]
ENV = {**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"}


def arena(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return run_arena(*args, cwd=cwd)


def by_task() -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for row in ROWS:
        groups.setdefault(row["task_id"], []).append(row)
    return groups


def test_a_hive_partitioned_parquet_dataset_scores_as_the_file_it_was_split_from(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    keys = sorted({k for r in ROWS for k in r} - {"task_id"})
    for task, rows in by_task().items():  # the task id only in the folder's name, as hive writes it
        folder = tmp_path / "runs" / f"task_id={task}"
        folder.mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist([{k: r.get(k) for k in keys} for r in rows]), folder / "part-0.parquet")
    (tmp_path / "runs" / "_SUCCESS").write_text("")  # what Spark leaves beside the data: not a shard
    shards = shard_files([tmp_path / "runs"])
    assert len(shards) == 12 and partition_keys(*shards[0]) == {"task_id": "backend-002"}
    table = read_shard_table(shards)
    assert table.num_rows == 180 and "task_id" in table.column_names  # one table: the columns' path
    whole = arena(tmp_path, "leaderboard", "--example")
    split = arena(tmp_path, "leaderboard", "runs", "--tasks", str(TASKS))
    assert split.returncode == 0, split.stderr
    assert split.stdout == whole.stdout
    scored = arena(tmp_path, "score", "runs", "--tasks", str(TASKS), "--format", "json")
    assert scored.returncode == 0 and len(json.loads(scored.stdout)) == 180


def test_json_lines_shards_given_as_a_folder_or_as_files(tmp_path: Path) -> None:
    folder = tmp_path / "shards"
    folder.mkdir()
    for task, rows in by_task().items():
        (folder / f"{task}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    whole = arena(tmp_path, "leaderboard", "--example").stdout
    assert arena(tmp_path, "leaderboard", "shards", "--tasks", str(TASKS)).stdout == whole
    files = sorted(str(p) for p in folder.glob("*.jsonl"))
    assert arena(tmp_path, "leaderboard", *files, "--tasks", str(TASKS)).stdout == whole
    # A bad line is reported where it is, shard and line.
    bad = folder / "frontend-006.jsonl"
    lines = bad.read_text().splitlines()
    lines[2] = json.dumps({**json.loads(lines[2]), "total_tokens": -5})
    bad.write_text("\n".join(lines) + "\n")
    refused = arena(tmp_path, "leaderboard", "shards", "--tasks", str(TASKS))
    assert refused.returncode == 2 and "shards/frontend-006.jsonl:3: submission" in refused.stderr
    assert "total_tokens: expected a finite number >= 0, got -5" in refused.stderr


def test_a_folder_without_shards_or_with_mixed_kinds_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no .parquet, .jsonl, .ndjson, .json, .csv files in the folder"):
        shard_files([tmp_path / "empty"])
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "a.jsonl").write_text(json.dumps(ROWS[0]) + "\n")
    (mixed / "b.csv").write_text("id,task_id\nx,t\n")
    with pytest.raises(InputError, match="shards of one kind expected, found .csv, .jsonl files"):
        shard_files([mixed])
    assert shard_files([mixed / "a.jsonl"]) is None  # one file: not a shard set


def test_a_shard_that_links_out_of_its_folder_is_refused_unread(tmp_path: Path) -> None:
    # The attack: a folder of shards, written by someone else, with one shard a link to a host
    # file outside it that parses as a run, and a linked folder beside it.
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.jsonl"
    secret.write_text(json.dumps({**ROWS[0], "id": "HOST-SECRET-42"}) + "\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "good.jsonl").write_text(json.dumps(ROWS[1]) + "\n")
    (runs / "b.jsonl").symlink_to(secret)
    (runs / "more").symlink_to(outside, target_is_directory=True)
    assert (runs / "b.jsonl").read_text() == secret.read_text()  # the link does reach the host file
    with pytest.raises(InputError, match=r"b\.jsonl: a link; a folder's shards are read as regular files inside it"):
        shard_files([runs])
    board = arena(tmp_path, "leaderboard", "runs", "--tasks", str(TASKS))
    assert board.returncode == 2 and "b.jsonl: a link" in board.stderr
    assert "HOST-SECRET-42" not in board.stdout + board.stderr
    (runs / "b.jsonl").unlink()  # the linked folder alone is not walked into
    assert [path.name for path, _ in shard_files([runs])] == ["good.jsonl"]
