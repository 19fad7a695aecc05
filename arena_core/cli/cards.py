"""The ``card`` command: every number behind one submission's overall score."""

from __future__ import annotations

import json

import click

from arena_core.cli.app import State, command, main
from arena_core.cli.inputs import InputFiles, inputs, read_inputs
from arena_core.model.errors import ArenaError, closest
from arena_core.report.card import cards_for, render_card


@main.command()
@click.argument("submission_id")
@inputs()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@command
def card(state: State, submission_id: str, inputs: InputFiles, fmt: str) -> None:
    """Show the score card of SUBMISSION_ID: its figures, the baseline they were normalised
    against, each metric's algorithm and unrounded score, the weights, the difficulty
    adjustment, each criterion's verdict, what was filled in or left out, and the provenance:
    enough to recompute the overall score by hand.

    \b
    Examples:
      arena card frontend-001/000 --example
      arena card run-42 runs.jsonl --tasks tasks.json --format json
    """
    subs, tasks = read_inputs(state, inputs)
    ids = [s.id for s in subs]
    if submission_id not in ids:
        raise ArenaError(f"no submission {submission_id!r} in the input{closest(submission_id, ids)}")
    if state.arena.config.baseline_scope != "task":
        raise ArenaError("score cards use per-task baselines: baseline_scope must be 'task'")
    [found] = cards_for(state.arena, subs, tasks, [submission_id])
    click.echo(json.dumps(found, indent=2) if fmt == "json" else render_card(found))
