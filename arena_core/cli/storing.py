"""``arena ingest`` and ``arena history``: the stored pipeline from the command line."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import click

from arena_core.cli.app import State, command, main
from arena_core.cli.inputs import InputFiles, inputs, read_inputs
from arena_core.cli.picking import Pick
from arena_core.cli.stores import STORE_ENV, StoreLocation, open_store, stored_arena_option
from arena_core.io.table import printable, render
from arena_core.io.votes import check_votes
from arena_core.model.errors import ArenaError
from arena_core.model.records import Baseline
from arena_core.model.serde import to_dict
from arena_core.model.votes import Vote
from arena_core.store.drift import MEDIANS
from arena_core.store.history import Standing, baseline_history, group_history
from arena_core.store.labels import LabelStore
from arena_core.store.trust import redact
from arena_core.store.votes import VoteStore


@main.command()
@inputs(tasks="optional")
@click.option(
    "--store",
    "store_path",
    type=StoreLocation(),
    envvar=STORE_ENV,
    default="arena.db",
    show_default=True,
    help="The arena database: a SQLite file (created if missing) or a postgresql:// URL.",
)
@click.option("--replace", is_flag=True, help="Let re-submitted ids replace the stored submissions.")
@click.option(
    "--lock-timeout",
    type=click.FloatRange(min=0),
    default=600.0,
    show_default=True,
    help="Seconds to wait while another process writes to the database.",
)
@command
def ingest(
    state: State,
    inputs: InputFiles,
    store_path: Path | str,
    replace: bool,
    lock_timeout: float,
) -> None:
    """Add submissions to an arena database: score, rank and update baselines in one transaction.

    Every task given with --tasks is stored, so later batches may omit it. An id already stored
    for its task is refused unless --replace. Writers to one database take turns. People's
    labels given with --labels are stored too (for arena calibrate --store and corrected boards),
    and people's votes given with --votes (for arena votes --store), each held against the runs
    stored and given: all of it is stored, or nothing.

    \b
    Examples:
      arena ingest runs.jsonl --tasks tasks.toml --store arena.db
      arena ingest more-runs.jsonl --store arena.db
      arena ingest --labels labels.jsonl --store arena.db
      arena ingest --votes votes.jsonl --store arena.db
      arena leaderboard --store arena.db
    """
    labels = list(state.labels)  # --labels: stored too, for arena calibrate --store
    votes = list(state.votes)  # --votes: stored too, for arena votes --store
    if (labels or votes) and not inputs.submissions and inputs.example is None:  # labels or votes alone
        if labels:
            stored = LabelStore(store_path)
            stored.refuse_stored(labels)
            click.echo(f"Stored {stored.add(labels)} labels in {redact(str(store_path))}")
        if votes:
            check_votes(votes, _stored_runs(store_path, lock_timeout))
            click.echo(_stored_votes(store_path, votes))
        return
    pick = Pick(ranks=True)  # the store's board ranks what is stored: runs no verdict grades are not stored
    subs, tasks = read_inputs(state, inputs, need_tasks=False, pick=pick, votes_on_these=False)
    if note := pick.note("stored"):
        click.echo(note, err=True)
    store = open_store(store_path, timeout=lock_timeout)
    if labels:
        LabelStore(store_path).refuse_stored(labels)  # before the runs are stored: all of it, or nothing
    if votes:
        check_votes(votes, {**_stored_runs(store_path, lock_timeout), **{s.id: s.task_id for s in subs}})
        VoteStore(store_path).refuse_stored(votes)
    result = state.arena.process(subs, store=store, tasks=tasks or None, replace=replace)
    task_count = len({e.task_id for e in result.evaluations})
    click.echo(
        f"Stored {len(result.evaluations)} evaluations for {task_count} tasks in {redact(str(store_path))}; "
        f"{len(result.outliers)} flagged for review"
    )
    for alert in result.drift:
        click.echo(f"drift: {printable(str(alert))}", err=True)
    if labels:
        click.echo(f"Stored {LabelStore(store_path).add(labels)} labels")
    if votes:
        click.echo(_stored_votes(store_path, votes))


def _stored_runs(store_path: Path | str, lock_timeout: float) -> dict[str, str | None]:
    """Each stored run's id to its task (none when the database does not exist yet)."""
    if isinstance(store_path, Path) and not store_path.exists():
        return {}
    store = open_store(store_path, timeout=lock_timeout)
    with store.transaction(write=False) as tx:
        return {s.id: s.task_id for t in tx.task_ids() for s in tx.submissions(t)}


def _stored_votes(store_path: Path | str, votes: list[Vote]) -> str:
    stored, skipped = VoteStore(store_path).add(votes)
    again = f" ({skipped} stored already, skipped)" if skipped else ""
    return f"Stored {stored} votes{again} in {redact(str(store_path))}"


@main.command()
@stored_arena_option
@click.option("--by", type=click.Choice(["tool", "model", "tool,model"]), default="tool", show_default=True)
@click.option("--task", "task_ids", multiple=True, help="Only this task. Repeatable.")
@click.option("--last", type=click.IntRange(min=1), help="Only the last N batches.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@command
def history(
    state: State, store_path: Path | str, by: str, task_ids: tuple[str, ...], last: int | None, fmt: str
) -> None:
    """Show how an arena database moved: each group's score after every stored batch, and every
    version of each task's baseline.

    Scores are the leaderboard's (leaderboard_method over the evaluations stored up to the
    batch; "*": provisional). Each stored evaluation names the baseline version it was scored
    against (baseline_version), so its score re-derives from the version listed here.

    \b
    Examples:
      arena history --store arena.db
      arena history --store arena.db --by model --last 5 --task fix-parser
    """
    store = open_store(store_path)
    tasks = set(task_ids) or None
    standings = group_history(state.arena, store, by=by, tasks=tasks, last=last)
    baselines = baseline_history(store, tasks=tasks)
    if tasks and not standings and not baselines:
        raise ArenaError(f"{store_path}: no stored evaluation or baseline of task {', '.join(sorted(tasks))}")
    if fmt == "json":
        out = {
            "batches": [
                {"batch": s.batch, "evaluated_at": s.evaluated_at, "runs": s.runs, "groups": to_dict(s.groups)}
                for s in standings
            ],
            "baselines": {key.replace("\x1f", " / "): to_dict(versions) for key, versions in baselines.items()},
        }
        click.echo(json.dumps(out, indent=2))
        return
    click.echo(f"Leaderboard by {by} after each batch ({state.arena.config.leaderboard_method}; #rank, * provisional)")
    click.echo(_standings(standings))
    click.echo("")
    click.echo("Baselines by version (medians; d: from the default baseline)")
    click.echo(_baselines(baselines))


def _standings(standings: Sequence[Standing]) -> str:
    groups = list(dict.fromkeys(g.group for s in standings for g in s.groups))
    rows = []
    for s in standings:
        cells = {g.group: f"{g.score:.2f} " + ("*" if g.rank is None else f"#{g.rank}") for g in s.groups}
        rows.append([s.batch, s.evaluated_at[:19].replace("T", " "), s.runs, *(cells.get(g, "-") for g in groups)])
    return render(["batch", "scored at", "runs", *groups], rows)


def _baselines(baselines: dict[str, list[Baseline]]) -> str:
    rows = []
    for key, versions in baselines.items():
        for b in versions:
            medians = [
                f"{getattr(b, median):g}" + (" d" if figure in b.defaulted else "")
                for median, figure in MEDIANS.items()
            ]
            stamp = (b.last_updated or "")[:19].replace("T", " ")
            rows.append([key.replace("\x1f", " / "), b.version, stamp, b.submission_count, *medians])
    return render(["task", "version", "stored at", "runs", "tokens", "tool calls", "time", "cost", "iterations"], rows)
