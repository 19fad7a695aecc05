"""``arena votes``: community ratings from people's votes between runs
(:mod:`arena_core.stats.voteboard`, docs/community.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from arena_core import examples
from arena_core.cli.app import State, command, main
from arena_core.cli.inputs import InputFiles, inputs, read_inputs
from arena_core.cli.selection import echo_csv, finite, stored_runs
from arena_core.compare import group_labels
from arena_core.io.table import render
from arena_core.io.votes import check_votes, read_votes
from arena_core.model.errors import ArenaError
from arena_core.model.records import Submission
from arena_core.model.serde import to_dict
from arena_core.model.votes import Vote
from arena_core.stats.voteboard import BOTH_BAD, VoteBoard, figure_reader, vote_board
from arena_core.store.votes import VoteStore

__all__ = ["runs_and_votes"]


@main.command(name="votes")
@inputs(tasks="optional")
@click.option("--store", "store_path", metavar="DATABASE",
              help="Rate the runs and votes of an arena database (arena ingest --votes, the service's votes).")  # fmt: skip
@click.option(
    "--by", default="tool", show_default=True, metavar="tool|model|tool,model|meta.KEY", help="Rate these groups."
)
@click.option("--style", "style", default="", metavar="FIGURES",
              help="Style control: figures of the runs (tokens, execution_time, files_created, meta.KEY, ...), comma-separated.")  # fmt: skip
@click.option("--both-bad", type=click.Choice(BOTH_BAD), default="tie", show_default=True,
              help="A both_bad vote counts as a tie, or is left out.")  # fmt: skip
@click.option("--keep-flagged", is_flag=True, help="Keep the votes of voters the hygiene test flags.")
@click.option(
    "--resamples",
    type=click.IntRange(10, 100_000),
    default=1000,
    show_default=True,
    help="Bootstrap resamples over votes.",
)
@click.option("--seed", type=int, default=20240601, show_default=True, help="The bootstrap's seed.")
@click.option("--confidence-level", type=click.FloatRange(0.5, 0.999), default=0.95, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@command
def votes_command(
    state: State,
    inputs: InputFiles,
    store_path: str | None,
    by: str,
    style: str,
    both_bad: str,
    keep_flagged: bool,
    resamples: int,
    seed: int,
    confidence_level: float,
    fmt: str,
) -> None:
    """Rate groups by people's votes between their runs: Bradley-Terry on the Elo scale.

    Each vote compares two runs of one task; the runs' groups (--by) battle. Ratings have mean
    1000 (400 points: 10 to 1 odds), with 95% intervals from a bootstrap over votes and from the
    model's sandwich covariance (shown where they differ by more than a point), rank ranges and
    tiers. Before rating, vote hygiene: a voter's repeated vote on a pair replaces the earlier
    (a repeat within a minute counts as a near duplicate), and voters whose votes follow a rule (always backing one group,
    always picking the first run, or the shorter) are flagged and left out (--keep-flagged keeps
    them). --style rates with style control (LMArena's): the figures' normalised differences
    enter beside the groups, and the board shows the controlled rating with the uncontrolled
    beside it. See docs/community.md.

    \b
    Examples:
      arena votes --example
      arena votes runs.jsonl --tasks tasks.json --votes votes.jsonl
      arena votes runs.jsonl --tasks tasks.json --votes votes.jsonl --by model --style total_tokens,files_created
      arena votes --store arena.db --format json
    """
    runs, votes = runs_and_votes(state, inputs, store_path)
    figures = tuple(f.strip() for f in style.split(",") if f.strip())
    figure_of = figure_reader(runs, figures)
    names = group_labels(runs, by, state.arena.config.model_aliases)
    group_of = {run.id: name for run, name in zip(runs, names, strict=True)}
    board = vote_board(
        votes, group_of, figure_of, style=figures, both_bad=both_bad, keep_flagged=keep_flagged,
        resamples=resamples, seed=seed, confidence_level=confidence_level,
    )  # fmt: skip
    _print(board, by, fmt, confidence_level, keep_flagged)


def runs_and_votes(state: State, given: InputFiles, store_path: str | None) -> tuple[list[Submission], list[Vote]]:
    """The runs and the votes on them: of the files (``--votes``), or of a store (its runs, its
    stored votes and any ``--votes`` given), each vote held against the runs."""
    if store_path is not None:
        runs, _ = stored_runs(Path(store_path) if "://" not in store_path else store_path)
        votes = [*VoteStore(store_path).votes(), *state.votes]
        check_votes(votes, {s.id: s.task_id for s in runs})
    else:
        if not (given.submissions or given.example):
            raise click.UsageError("give the runs voted on (files, --example or --store)")
        state.scores_runs = False
        runs, _ = read_inputs(state, given, need_tasks=False)
        votes = state.votes
        if not votes and given.example == "synthetic":  # the example's own votes (arena example writes them)
            votes = read_votes(examples.VOTES)
    if not votes:
        raise click.UsageError("give --votes FILE: people's votes between runs (see docs/community.md)")
    return runs, votes


def _print(board: VoteBoard, by: str, fmt: str, confidence_level: float, keep_flagged: bool) -> None:
    if fmt == "json":
        click.echo(_json(board))
        return
    controlled = bool(board.style)
    apart = [r for r in board.rows if abs(r.se_low - r.ci_low) > 1 or abs(r.se_high - r.ci_high) > 1]
    header = ["Rank", by, "Rating", f"{confidence_level:.0%} CI"]
    header += ["Sandwich CI"] if apart else []
    header += ["Uncontrolled"] if controlled else []
    header += ["Ranks", "Tier", "Votes", "Voters", "Won %"]
    cells = []
    for r in board.rows:
        row: list[object] = [r.rank, r.group, round(r.rating, 1), f"{r.ci_low:.1f}-{r.ci_high:.1f}"]
        if apart:
            row.append(f"{r.se_low:.1f}-{r.se_high:.1f}" if r in apart else "")
        if controlled:
            row.append(round(r.uncontrolled or 0.0, 1))
        row += [f"{r.rank_low}-{r.rank_high}", r.tier, r.votes, r.voters, round(r.share, 1)]
        cells.append(row)
    if fmt == "csv":
        echo_csv(header, cells)
        return
    click.echo(render(header, cells))
    if board.style:
        click.echo("")
        click.echo(render(
            ["Style figure", "Coefficient", f"{confidence_level:.0%} CI", "Sandwich CI"],
            [[s.figure, f"{s.coefficient:.4f}", f"{s.ci_low:.4f} to {s.ci_high:.4f}", f"{s.se_low:.4f} to {s.se_high:.4f}"]
             for s in board.style],
        ))  # fmt: skip
    click.echo("")
    for line in _hygiene_lines(board, keep_flagged):
        click.echo(line)


def _hygiene_lines(board: VoteBoard, keep_flagged: bool) -> list[str]:
    h = board.hygiene
    lines = [f"{board.used} of {h.given} votes rated"]
    parts = [
        (h.repeated, "replaced by the voter's later vote on the same pair"),
        (h.near_duplicates, "near duplicates (the same voter and pair again within a minute): one counts"),
        (h.same_group, "between runs of the same group"),
        (h.both_bad, "both_bad, left out"),
        *((count, f"without {figure}") for figure, count in h.without_figure.items()),
    ]
    lines += [f"  {count} {why}" for count, why in parts if count]
    flagged = [c for c in h.voters if c.flagged]
    if flagged:
        what = "kept (--keep-flagged)" if keep_flagged else f"left out, {h.removed} votes"
        lines.append(f"  {len(flagged)} voter{'s' if len(flagged) != 1 else ''} flagged by the hygiene test, {what}:")
        lines.append(
            render(
                ["Voter", "Votes", "Score", "Rule"], [[c.voter, c.votes, round(c.score, 1), c.rule] for c in flagged]
            )
        )
    unjudged = sum(not c.judged for c in h.voters)
    if unjudged:
        lines.append(f"  {unjudged} voters with too few votes to judge (kept)")
    if board.prior:
        lines.append(
            f"note: some group won or lost every vote it played; {board.prior:g} tie game per group against a "
            "reference rated 1000 keeps its rating finite"
        )
    return lines


def _json(board: VoteBoard) -> str:
    data = to_dict(board)
    if not isinstance(data, dict):
        raise ArenaError("votes: the board did not serialise")
    return json.dumps(finite(data), indent=2)
