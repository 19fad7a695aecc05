"""``arena weights fit``: dimension weights learned from people's votes
(:mod:`arena_core.stats.learnedweights`), written as a profile file every command takes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import click

from arena_core.cli.app import State, command, main, quiet_option, score_all
from arena_core.cli.inputs import InputFiles, inputs, read_inputs
from arena_core.cli.picking import Pick
from arena_core.compare import group_labels
from arena_core.io.output import atomic_output
from arena_core.io.table import render
from arena_core.stats.learnedweights import fit_from_votes, learned_profile
from arena_core.stats.voteboard import figure_reader, flagged_voters


@main.group(name="weights")
def weights_group() -> None:
    """Weights learned from people's votes (docs/community.md)."""


@weights_group.command(name="fit")
@inputs(tasks="optional")
@click.option("--base", metavar="PROFILE",
              help="Score the runs with this profile (name or .toml; default: -p, else default) and compare with its weights.")  # fmt: skip
@click.option("--both-bad", type=click.Choice(["tie", "drop"]), default="tie", show_default=True)
@click.option("--by", default="tool", show_default=True, metavar="tool|model|tool,model|meta.KEY",
              help="The groups vote hygiene tests voters against (as arena votes --by).")  # fmt: skip
@click.option("--keep-flagged", is_flag=True, help="Keep the votes of voters the hygiene test flags.")
@click.option("--resamples", type=click.IntRange(10, 100_000), default=1000, show_default=True,
              help="Bootstrap resamples over voters.")  # fmt: skip
@click.option("--seed", type=int, default=20240601, show_default=True)
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="The profile file to write (.toml).")  # fmt: skip
@quiet_option
@command
def fit_command(
    state: State,
    inputs: InputFiles,
    base: str | None,
    both_bad: str,
    by: str,
    keep_flagged: bool,
    resamples: int,
    seed: int,
    output: Path,
    quiet: bool,
) -> None:
    """Learn the dimension weights whose overall score best predicts the votes.

    P(a wins) = logistic(k x (overall_a - overall_b)), over the weights (non-negative, adding up
    to 1) of the base profile's dimensions, fitted by maximum likelihood; intervals from a
    bootstrap over voters; cross-validated vote prediction (folds by voter) against the base
    profile's weights. Votes go through the hygiene of `arena votes` first (--by groups the
    runs; voters it flags are left out unless --keep-flagged). Writes a profile file: score with it by `arena -p FILE ...`, and A/B it
    against the spec's weights with `arena compare --b FILE`.

    \b
    Examples:
      arena weights fit runs.jsonl --tasks tasks.json --votes votes.jsonl -o learned.toml
      arena weights fit --example --votes votes.jsonl --base gated -o learned.toml
    """
    if output.suffix != ".toml":
        raise click.UsageError(f"{output}: the profile file is a .toml file")
    state.profile = base or state.profile
    if not state.vote_paths:
        raise click.UsageError("give --votes FILE: people's votes between runs (see docs/community.md)")
    pick = Pick(ranks=True)  # weights fit to scores: a run no verdict grades has no correctness to fit
    runs, tasks = read_inputs(state, inputs, pick=pick)  # read once: scored, and grouped for the hygiene test
    if note := pick.note():
        click.echo(note, err=True)
    evaluations = score_all(state, runs, tasks, quiet)
    profiles = state.arena.scorer.profiles
    votes = state.votes
    if not keep_flagged:
        names = group_labels(runs, by, state.arena.config.model_aliases)
        group_of = {run.id: name for run, name in zip(runs, names, strict=True)}
        flagged = flagged_voters(votes, group_of, figure_reader(runs, ()), both_bad)
        votes = [v for v in votes if v.voter not in flagged]
        if flagged:
            click.echo(f"left out {len(state.votes) - len(votes)} votes of {len(flagged)} voter{'s' if len(flagged) != 1 else ''} "
                       "the hygiene test flags "
                       f"({', '.join(sorted(flagged)[:5])}{', ...' if len(flagged) > 5 else ''}; --keep-flagged keeps them)")  # fmt: skip
    found = fit_from_votes(votes, evaluations, {n: p.weights for n, p in profiles.items()}, both_bad,
                           resamples=resamples, seed=seed)  # fmt: skip
    used = sorted({e.weight_profile for e in evaluations})
    text = learned_profile(found, used, state.profile or "default")
    with atomic_output(output) as handle:
        handle.write(text)
    click.echo(render(
        ["Dimension", "Weight", "95% CI", "Base"],
        [[d, f"{w:.3f}", f"{lo:.3f}-{hi:.3f}", _base_weight([profiles[p].weights for p in used], d)]
         for d, w, lo, hi in zip(found.dimensions, found.weights, found.low, found.high, strict=True)],
    ))  # fmt: skip
    click.echo(
        f"\n{found.votes} votes by {found.voters} voters; held-out accuracy {found.fitted.accuracy:.3f} "
        f"(base {found.base.accuracy:.3f}), log loss {found.fitted.log_loss:.3f} (base {found.base.log_loss:.3f})"
    )
    click.echo(f"wrote {output}: score with `arena -p {output} ...`")


def _base_weight(tables: Sequence[Mapping[str, float]], dimension: str) -> str:
    """The base profiles' weight of ``dimension``: one number, or their range where categories differ."""
    values = sorted({table.get(dimension, 0.0) for table in tables})
    return f"{values[0]:.3f}" if len(values) == 1 else f"{values[0]:.3f}-{values[-1]:.3f}"
