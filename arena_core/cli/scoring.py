"""Commands that score and inspect submissions: ``score``, ``baseline``, ``outliers``, ``validate``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from arena_core.cli.app import State, command, main, quiet_option, score_all
from arena_core.cli.inputs import InputFiles, inputs, read_columns, read_inputs
from arena_core.cli.picking import Pick
from arena_core.cli.streams import stream_scores, streamed_source
from arena_core.io.output import atomic_output
from arena_core.io.writers import FORMATS, write_evaluations
from arena_core.model.records import Submission
from arena_core.model.serde import to_dict


@main.command()
@inputs()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="jsonl", show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    help="Write here instead of stdout (the file appears only when scoring succeeded); when the runs are "
    "streamed, a folder (existing and empty, or ending in /) gets one file per partition.",
)
@click.option(
    "--executor",
    metavar="NAME",
    help="Where runs are scored (by task partitions) and workspaces checked: threads, processes, dask, or a "
    "plugin's (default: check_executor).",
)
@quiet_option
@command
def score(
    state: State,
    inputs: InputFiles,
    fmt: str,
    output: str | None,
    executor: str | None,
    quiet: bool,
) -> None:
    """Score every submission: one evaluation per submission, in input order.

    Parquet runs of more than partition_rows runs (or at URLs: s3://, gs://, hf://) are streamed,
    a partition of whole tasks at a time on this machine's cores (or the --executor dask
    cluster), in bounded memory: jsonl or parquet out, in input order when the input is grouped
    by task, else partition by partition. See docs/scaling.md.

    \b
    Examples:
      arena score runs.jsonl --tasks tasks.toml > evaluations.jsonl
      arena score runs.csv --tasks tasks.json --format csv -o scores.csv
      arena score runs.parquet --tasks tasks.json --format parquet -o scores.parquet
      arena score --example --format table
      arena score runs.jsonl --tasks tasks.json --executor dask -o scores.jsonl
    """
    state.executor = executor
    if fmt == "parquet" and output is None:
        raise click.UsageError("--format parquet writes a file: give -o FILE")
    target = None if output is None else Path(output)
    folder = target is not None and (target.is_dir() or output.endswith(("/", os.sep)))  # type: ignore[union-attr]
    source = streamed_source(state, inputs, Pick())
    if source is not None:
        stream_scores(state, source, inputs, fmt, target, folder, quiet)
        return
    if folder:
        raise click.UsageError(f"{output}: a folder; only streamed runs are written as one file per partition")
    subs, tasks = read_columns(state, inputs)  # each run evaluated as it is, graded or not
    evaluations = score_all(state, subs, tasks, quiet)
    with atomic_output(target) as out:
        write_evaluations(evaluations, fmt, out)


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
