"""Commands that score and inspect submissions: ``score``, ``leaderboard``, ``baseline``, ``outliers``, ``validate``."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from arena_core.cli.app import State, command, main, quiet_option, score_all
from arena_core.cli.inputs import InputFiles, inputs, read_columns, read_inputs
from arena_core.io.output import atomic_output
from arena_core.io.table import render
from arena_core.io.writers import FORMATS, write_evaluations
from arena_core.model.errors import ArenaError
from arena_core.model.records import Evaluation, Submission
from arena_core.model.serde import to_dict
from arena_core.store import SQLiteStore


@main.command()
@inputs()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="jsonl", show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write here instead of stdout (the file appears only when scoring succeeded).",
)
@quiet_option
@command
def score(
    state: State,
    inputs: InputFiles,
    fmt: str,
    output: Path | None,
    quiet: bool,
) -> None:
    """Score every submission: one evaluation per submission, in input order.

    \b
    Examples:
      arena score runs.jsonl --tasks tasks.toml > evaluations.jsonl
      arena score runs.csv --tasks tasks.json --format csv -o scores.csv
      arena score runs.parquet --tasks tasks.json --format parquet -o scores.parquet
      arena score --example --format table
    """
    if fmt == "parquet" and output is None:
        raise click.UsageError("--format parquet writes a file: give -o FILE")
    subs, tasks = read_columns(state, inputs)
    evaluations = score_all(state, subs, tasks, quiet)
    with atomic_output(output) as out:
        write_evaluations(evaluations, fmt, out)


def _submission_rows(state: State, evaluations: Sequence[Evaluation], subs: Sequence[Submission]) -> list[list[Any]]:
    flags: dict[str, tuple[str, ...]] = {}
    for task_id in {e.task_id for e in evaluations}:
        for outlier in state.arena.detect_outliers([s for s in subs if s.task_id == task_id]):
            flags[outlier.submission_id] = outlier.flags
    dims = list(dict.fromkeys(d for e in evaluations for d in e.scores))
    ordered = sorted(evaluations, key=lambda e: (e.task_id, e.overall_ranking or 0, e.submission_id))
    return [
        [
            e.task_id,
            e.overall_ranking,
            e.submission_id,
            e.tool,
            e.overall_score,
            *(e.scores.get(d) for d in dims),
            e.percentile,
            ", ".join([*(["provisional"] if e.provisional else []), *flags.get(e.submission_id, ())]),
        ]
        for e in ordered
    ]


@main.command()
@inputs()
@click.option(
    "--store",
    "store_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Rank what an arena database holds (see `arena ingest`) instead of files.",
)
@click.option(
    "--by",
    type=click.Choice(["tool", "model", "tool,model", "submission"]),
    default="tool",
    show_default=True,
    help="Rank tools, models or tool and model pairs by mean overall score, or list every submission.",
)
@click.option("--task", "task_id", help="Only this task.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@quiet_option
@command
def leaderboard(
    state: State,
    inputs: InputFiles,
    store_path: Path | None,
    by: str,
    task_id: str | None,
    fmt: str,
    quiet: bool,
) -> None:
    """Print a ranked leaderboard.

    Groups show the number of submissions, the mean overall score with its confidence
    interval (the configured method) and the mean of each dimension; groups and entries below
    min_submissions_per_tool are marked provisional (*), and --by submission shows outlier flags.

    \b
    Examples:
      arena leaderboard --example
      arena leaderboard runs.jsonl --tasks tasks.toml --by model
      arena leaderboard --example --by submission --task debugging-009
      arena leaderboard --store arena.db
    """
    if store_path is not None:
        evaluations, subs = _from_store(store_path, task_id)
    else:
        if by == "submission":  # its flags need the submissions themselves
            subs, tasks = read_inputs(state, inputs)
            if task_id is not None:
                if task_id not in tasks:
                    raise ArenaError(f"--task {task_id!r}: no such task (tasks: {', '.join(sorted(tasks))})")
                subs = [s for s in subs if s.task_id == task_id]
            evaluations = score_all(state, subs, tasks, quiet)
        else:
            records, tasks = read_columns(state, inputs, task_id=task_id)
            evaluations = score_all(state, records, tasks, quiet)
    if by == "submission":
        dims = list(dict.fromkeys(d for e in evaluations for d in e.scores))
        rows = _submission_rows(state, evaluations, subs)
        if fmt == "json":
            click.echo(json.dumps([to_dict(e) for e in evaluations], indent=2))
            return
        click.echo(
            render(
                ["Task", "Rank", "Submission", "Tool", "Overall", *(d.capitalize() for d in dims), "Pctl", "Flags"],
                rows,
            )
        )
        return
    groups = state.arena.leaderboard(evaluations, by=by)
    if fmt == "json":
        click.echo(json.dumps([to_dict(g) for g in groups], indent=2))
        return
    dims = list(dict.fromkeys(d for g in groups for d in g.means))
    rows = [
        [
            g.rank,
            g.name + (" *" if g.provisional else ""),
            g.submissions,
            g.mean_overall,
            f"{g.ci_low:.2f}-{g.ci_high:.2f}",
            *(g.means.get(d) for d in dims),
        ]
        for g in groups
    ]
    click.echo(
        render(
            [
                "Rank",
                " / ".join(k.capitalize() for k in by.split(",")),
                "N",
                "Overall",
                "95% CI",
                *(d.capitalize() for d in dims),
            ],
            rows,
        )
    )
    if any(g.provisional for g in groups):
        click.echo(f"* provisional: fewer than {state.arena.config.min_submissions_per_tool} submissions")


def _from_store(path: Path, task_id: str | None) -> tuple[Sequence[Evaluation], list[Submission]]:
    if not path.exists():
        raise ArenaError(f"{path}: no such arena database (create one with `arena ingest`)")
    store = SQLiteStore(path)
    with store.transaction(write=False) as tx:
        ids = [task_id] if task_id else tx.task_ids()
        evaluations = [e for t in ids for e in tx.evaluations(t)]
        subs = [s for t in ids for s in tx.submissions(t)]
    if not evaluations:
        raise ArenaError(f"{path}: no evaluations" + (f" for task {task_id!r}" if task_id else ""))
    return evaluations, subs


@main.command()
@inputs(tasks="optional")
@click.option("--task", "task_id", help="Only this task.")
@command
def baseline(state: State, inputs: InputFiles, task_id: str | None) -> None:
    """Print each task's dynamic baseline (the spec's calculate_task_baseline) as JSON Lines.

    \b
    Examples:
      arena baseline runs.jsonl
      arena baseline --example --task backend-002
    """
    subs, tasks = read_inputs(state, inputs, need_tasks=False)
    by_task: dict[str, list[Submission]] = {}
    for s in subs:
        by_task.setdefault(s.task_id or "(no task)", []).append(s)
    for tid, group in by_task.items():
        if task_id is None or tid == task_id:
            click.echo(json.dumps(to_dict(state.arena.compute_baseline(tid, group, task=tasks.get(tid)))))


@main.command()
@inputs(tasks="optional")
@command
def outliers(state: State, inputs: InputFiles) -> None:
    """Flag suspicious submissions per task (the spec's detect_outliers) as JSON Lines.

    Exits with status 1 when any submission is flagged.

    \b
    Examples:
      arena outliers runs.jsonl
      arena outliers --example
    """
    subs, _ = read_inputs(state, inputs, need_tasks=False)
    by_task: dict[str | None, list[Submission]] = {}
    for s in subs:
        by_task.setdefault(s.task_id, []).append(s)
    found = [o for group in by_task.values() for o in state.arena.detect_outliers(group)]
    for outlier in found:
        click.echo(json.dumps(to_dict(outlier)))
    click.echo(f"{len(found)} of {len(subs)} submissions flagged for review", err=True)
    if found:
        sys.exit(1)


@main.command()
@inputs()
@quiet_option
@command
def validate(state: State, inputs: InputFiles, quiet: bool) -> None:
    """Score every submission and check the evaluations (the spec's validate_evaluation_metrics).

    Prints one finding per line; exits with status 1 when there is any.

    \b
    Examples:
      arena validate runs.jsonl --tasks tasks.toml
      arena validate --example
    """
    subs, tasks = read_inputs(state, inputs)
    evaluations = score_all(state, subs, tasks, quiet)
    findings = [
        f"{ev.submission_id}: {message}"
        for ev, sub in zip(evaluations, subs, strict=True)
        for message in state.arena.validate(ev, sub.total_tokens)
    ]
    for finding in findings:
        click.echo(finding)
    click.echo(f"{len(findings)} findings in {len(evaluations)} evaluations", err=True)
    if findings:
        sys.exit(1)
