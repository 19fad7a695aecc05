"""``arena compare``: two scoring profiles on the same submissions."""

from __future__ import annotations

import json
from pathlib import Path

import click

from arena_core.cli.app import State, command, main
from arena_core.cli.inputs import InputFiles, inputs, read_columns, read_inputs
from arena_core.cli.provenances import board_document
from arena_core.cli.selection import Selection, pick_of, selection_options
from arena_core.compare import compare as compare_profiles
from arena_core.engine.columns import Columns
from arena_core.io.output import atomic_output
from arena_core.model.records import Submission
from arena_core.report.comparison import render_html, render_text
from arena_core.stats.runs import needs_meta


@main.command()
@inputs()
@click.option(
    "--a",
    "profile_a",
    default="default",
    show_default=True,
    metavar="NAME_OR_FILE",
    help="Profile A: a [profiles.NAME] of the configuration, 'default', or a profile .toml file.",
)
@click.option("--b", "profile_b", required=True, metavar="NAME_OR_FILE", help="Profile B, compared with A.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "html"]), default="text", show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write here instead of stdout (the file appears only when the comparison succeeded).",
)
@click.option(
    "--top-k", type=click.IntRange(min=1), default=10, show_default=True, help="Size of the top set compared."
)
@click.option("--movers", type=click.IntRange(min=0), default=10, show_default=True, help="Largest movers listed.")
@click.option("--resamples", type=click.IntRange(min=1), default=2000, show_default=True, help="Bootstrap resamples.")
@click.option(
    "--confidence-level", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95, show_default=True
)
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed: same inputs, same report.")
@click.option(
    "--by",
    default="tool",
    show_default=True,
    metavar="tool|model|tool,model|meta.KEY",
    help="What the per-group table groups by.",
)
@selection_options
@command
def compare(
    state: State,
    inputs: InputFiles,
    profile_a: str,
    profile_b: str,
    fmt: str,
    output: Path | None,
    top_k: int,
    movers: int,
    resamples: int,
    confidence_level: float,
    seed: int,
    by: str,
    selection: Selection,
) -> None:
    """Compare two scoring profiles on the same submissions.

    Reports B against A: score deltas per submission and tool (overall and per metric),
    rank changes and the largest movers, Kendall's tau-b and Spearman's rho (pooled and per
    task), top-k overlap and a seeded paired bootstrap interval of the mean difference.

    \b
    Examples:
      arena compare --example --b log-tokens
      arena compare runs.jsonl --tasks tasks.toml --a default --b robust.toml
      arena compare --example --b log-tokens --format html -o comparison.html
      arena compare --example --b gated --by model
      arena compare runs.jsonl --tasks tasks.json --b gated --by model --window after-cutoff
    """

    a, b = state.loaded.profile(profile_a), state.loaded.profile(profile_b)
    pick = pick_of(state, selection)  # two boards of the same runs: the runs no verdict grades are on neither
    # Columns, that keep each run's meta where the groups' names read it (a tool's name does
    # not: a file is then read straight into a table), unless a profile prices: each scoring
    # then prices the runs as they were given.
    subs: Columns | list[Submission]
    if any(config.cost_source != "reported" for _, config in (a, b)):
        subs, tasks = read_inputs(state, inputs, pick=pick)
    else:
        subs, tasks = read_columns(state, inputs, pick=pick, with_meta=needs_meta(by))
    if note := pick.note():
        click.echo(note, err=True)
    report = compare_profiles(
        subs,
        tasks,
        a,
        b,
        top_k=top_k,
        resamples=resamples,
        confidence_level=confidence_level,
        seed=seed,
        movers=movers,
        by=by,
    )
    text = (
        json.dumps(board_document(state, tasks, report.as_dict(), pick.time), indent=2) + "\n"
        if fmt == "json"
        else render_html(report)
        if fmt == "html"
        else render_text(report)
    )
    with atomic_output(output) as out:
        out.write(text)
