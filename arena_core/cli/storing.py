"""``arena ingest``: the stored pipeline from the command line."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from arena_core.cli.app import State, command, inputs, main, read_inputs
from arena_core.store import SQLiteStore


@main.command()
@inputs(tasks="optional")
@click.option(
    "--store",
    "store_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default="arena.db",
    show_default=True,
    help="The arena database (SQLite; created if missing).",
)
@command
def ingest(state: State, submissions: Path | None, tasks_path: Path | None, example: bool, store_path: Path) -> None:
    """Add submissions to an arena database: score, rank and update baselines in one transaction.

    Tasks given with --tasks are stored too; later batches may omit them. Re-submitting an id
    replaces it.

    \b
    Examples:
      arena ingest runs.jsonl --tasks tasks.toml --store arena.db
      arena ingest more-runs.jsonl --store arena.db
      arena leaderboard --store arena.db
    """
    subs, tasks = read_inputs(state, submissions, tasks_path, example, need_tasks=False)
    result = asyncio.run(state.arena.process_batch(subs, store=SQLiteStore(store_path), tasks=tasks or None))
    task_count = len({e.task_id for e in result.evaluations})
    click.echo(
        f"Stored {len(result.evaluations)} evaluations for {task_count} tasks in {store_path}; "
        f"{len(result.outliers)} flagged for review"
    )
