"""The ``arena`` command: score, rank and inspect an arena from the terminal.

Errors a user can cause print one line (``Error: FILE:LINE: field: expected ..., got ...``)
and exit with status 2; set ``ARENA_RAISE_ERRORS=1`` to see the traceback instead.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from collections.abc import Callable, Sequence
from functools import wraps
from pathlib import Path
from typing import Any

import click

from arena_core import examples
from arena_core.arena import Arena
from arena_core.errors import ArenaError
from arena_core.io import read_submissions, read_tasks
from arena_core.models import DIMENSIONS, Evaluation
from arena_core.ranking import competition_ranks
from arena_core.serde import to_dict
from arena_core.table import render

__all__ = ["main"]


def _friendly_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the library's errors into one line and exit status 2."""

    @wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except ArenaError as exc:
            if os.environ.get("ARENA_RAISE_ERRORS"):
                raise
            click.echo(f"Error: {exc}", err=True)
            sys.exit(2)

    return run


def _inputs(submissions: Path | None, tasks: Path | None, example: bool) -> tuple[Path, Path]:
    if example:
        return examples.SUBMISSIONS, examples.TASKS
    if submissions is None or tasks is None:
        raise click.UsageError("give SUBMISSIONS and --tasks, or --example for the bundled arena")
    return submissions, tasks


_input_options = [
    click.argument("submissions", type=click.Path(path_type=Path, dir_okay=False), required=False),
    click.option("--tasks", "tasks", type=click.Path(path_type=Path, dir_okay=False), help="Tasks file (JSON)."),
    click.option("--example", is_flag=True, help="Use the bundled example arena."),
]


def _with_inputs(command: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(_input_options):
        command = option(command)
    return command


def _score(submissions: Path | None, tasks: Path | None, example: bool) -> list[Evaluation]:
    sub_path, task_path = _inputs(submissions, tasks, example)
    return Arena().evaluate_many(read_submissions(sub_path), read_tasks(task_path))


@click.group()
@click.version_option(package_name="arena-core")
def main() -> None:
    """Score and rank workflow submissions of AI coding tools."""


@main.command()
@_with_inputs
@_friendly_errors
def score(submissions: Path | None, tasks: Path | None, example: bool) -> None:
    """Score every submission; print evaluations as JSON Lines.

    \b
    Example:
      arena score runs.jsonl --tasks tasks.json > evaluations.jsonl
    """
    for ev in _score(submissions, tasks, example):
        click.echo(json.dumps(to_dict(ev)))


def _group_rows(evaluations: Sequence[Evaluation], key: str) -> list[list[Any]]:
    groups: dict[str, list[Evaluation]] = {}
    for ev in evaluations:
        groups.setdefault(getattr(ev, key) or "(unknown)", []).append(ev)
    summary = sorted(
        ((name, [e.overall_score for e in evs], evs) for name, evs in groups.items()),
        key=lambda g: statistics.fmean(g[1]),
        reverse=True,
    )
    ranks = competition_ranks([round(statistics.fmean(g[1]), 2) for g in summary])
    return [
        [rank, name, len(evs), statistics.fmean(scores),
         *(statistics.fmean(e.scores[d] for e in evs) for d in DIMENSIONS)]
        for rank, (name, scores, evs) in zip(ranks, summary)
    ]


@main.command()
@_with_inputs
@click.option("--by", type=click.Choice(["tool", "model", "submission"]), default="tool", show_default=True,
              help="Rank tools or models by their mean overall score, or list every submission.")
@click.option("--task", "task_id", help="Only this task.")
@_friendly_errors
def leaderboard(submissions: Path | None, tasks: Path | None, example: bool, by: str, task_id: str | None) -> None:
    """Print a ranked leaderboard.

    \b
    Examples:
      arena leaderboard --example
      arena leaderboard runs.jsonl --tasks tasks.json --by submission --task debugging-009
    """
    evaluations = _score(submissions, tasks, example)
    if task_id is not None:
        evaluations = [e for e in evaluations if e.task_id == task_id]
    dims = [d.capitalize() for d in DIMENSIONS]
    if by == "submission":
        ordered = sorted(evaluations, key=lambda e: (e.task_id, e.overall_ranking))
        rows = [[e.task_id, e.overall_ranking, e.submission_id, e.tool, e.overall_score,
                 *(e.scores.get(d) for d in DIMENSIONS), e.percentile] for e in ordered]
        click.echo(render(["Task", "Rank", "Submission", "Tool", "Overall", *dims, "Pctl"], rows))
    else:
        rows = _group_rows(evaluations, by)
        click.echo(render(["Rank", by.capitalize(), "N", "Overall", *dims], rows))


@main.command()
@click.option("--all", "include_builtins", is_flag=True, help="Include the built-in plugins.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_friendly_errors
def plugins(include_builtins: bool, as_json: bool) -> None:
    """List loaded plugins, their distributions and the components each registered."""
    infos = Arena().plugins(include_builtins=include_builtins)
    if as_json:
        click.echo(json.dumps([to_dict(i) for i in infos], indent=2))
        return
    rows = [
        [i.name, "blocked" if i.blocked else ("built-in" if i.builtin else f"{i.distribution} {i.version}"),
         "; ".join(f"{family}: {', '.join(names)}" for family, names in i.components.items())]
        for i in infos
    ]
    click.echo(render(["Plugin", "Source", "Registers"], rows) if rows else "No third-party plugins installed.")
