"""``arena weights fit``: dimension weights learned from people's votes
(:mod:`arena_core.stats.learnedweights`), written as a profile file every command takes."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import click
import numpy as np
import tomli_w

from arena_core.cli.app import State, command, main, quiet_option
from arena_core.cli.inputs import InputFiles, inputs
from arena_core.cli.picking import Pick
from arena_core.cli.selection import evaluations_of
from arena_core.io.output import atomic_output
from arena_core.io.table import render
from arena_core.model.errors import ArenaError
from arena_core.model.records import Evaluation
from arena_core.model.votes import Vote, last_votes, points
from arena_core.stats.learnedweights import WeightFit, fit_weights

__all__ = ["learned_profile"]


@main.group(name="weights")
def weights_group() -> None:
    """Weights learned from people's votes (docs/community.md)."""


@weights_group.command(name="fit")
@inputs(tasks="optional")
@click.option("--base", metavar="PROFILE",
              help="Score the runs with this profile (name or .toml; default: -p, else default) and compare with its weights.")  # fmt: skip
@click.option("--both-bad", type=click.Choice(["tie", "drop"]), default="tie", show_default=True)
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
    resamples: int,
    seed: int,
    output: Path,
    quiet: bool,
) -> None:
    """Learn the dimension weights whose overall score best predicts the votes.

    P(a wins) = logistic(k x (overall_a - overall_b)), over the weights (non-negative, adding up
    to 1) of the base profile's dimensions, fitted by maximum likelihood; intervals from a
    bootstrap over voters; cross-validated vote prediction (folds by voter) against the base
    profile's weights. Writes a profile file: score with it by `arena -p FILE ...`, and A/B it
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
    evaluations, _, _ = evaluations_of(state, inputs, None, Pick(), False, quiet)
    profiles = state.arena.scorer.profiles
    found = fit_from_votes(state.votes, evaluations, {n: p.weights for n, p in profiles.items()}, both_bad,
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


def fit_from_votes(
    votes: Sequence[Vote], evaluations: Sequence[Evaluation], profiles: Mapping[str, Mapping[str, float]],
    both_bad: str, *, resamples: int, seed: int,
) -> WeightFit:  # fmt: skip
    """The learned weights from ``votes`` between the runs ``evaluations`` scored.

    :raises ArenaError: the tasks' profiles weigh different dimensions, or no vote is usable.
    """
    by_id = {e.submission_id: e for e in evaluations}
    dimension_sets = {tuple(sorted(profiles[e.weight_profile])) for e in evaluations}
    if len(dimension_sets) > 1:
        raise ArenaError(
            "weights fit: the tasks' weight profiles weigh different dimensions "
            f"({'; '.join(', '.join(d) for d in sorted(dimension_sets))}): one set of weights cannot serve them all"
        )
    dimensions = list(profiles[evaluations[0].weight_profile])
    rows, outcome, voters, base = [], [], [], []
    voter_index: dict[str, int] = {}
    for vote in last_votes(votes):
        if both_bad == "drop" and vote.winner == "both_bad":
            continue
        a, b = by_id.get(vote.a), by_id.get(vote.b)
        if a is None or b is None or any(d not in a.scores or d not in b.scores for d in dimensions):
            continue
        difference = [a.scores[d] - b.scores[d] for d in dimensions]
        rows.append(difference)
        outcome.append(points(vote))
        voters.append(voter_index.setdefault(vote.voter, len(voter_index)))
        weights = profiles[a.weight_profile]
        base.append(math.fsum(weights[d] * x for d, x in zip(dimensions, difference, strict=True)))
    if not rows:
        raise ArenaError("weights fit: no vote compares two runs scored on every dimension")
    return fit_weights(np.array(rows), np.array(outcome), np.array(voters), dimensions, np.array(base),
                       resamples=resamples, seed=seed)  # fmt: skip


def learned_profile(found: WeightFit, profiles: Sequence[str], base: str) -> str:
    """The profile file: the learned weights for every weight profile the tasks use."""
    rounded = [round(float(w), 6) for w in found.weights]
    largest = int(np.argmax(rounded))
    rounded[largest] = round(1.0 - math.fsum(w for i, w in enumerate(rounded) if i != largest), 6)
    weights = dict(zip(found.dimensions, rounded, strict=True))
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    header = (
        f"# Weights learned by `arena weights fit` on {when} from {found.votes} votes by {found.voters} voters\n"
        f"# (base profile {base}); held-out accuracy {found.fitted.accuracy:.3f}, base {found.base.accuracy:.3f}.\n"
    )
    return header + tomli_w.dumps({"weights": dict.fromkeys(profiles, weights)})


def _base_weight(tables: Sequence[Mapping[str, float]], dimension: str) -> str:
    """The base profiles' weight of ``dimension``: one number, or their range where categories differ."""
    values = sorted({table.get(dimension, 0.0) for table in tables})
    return f"{values[0]:.3f}" if len(values) == 1 else f"{values[0]:.3f}-{values[-1]:.3f}"
