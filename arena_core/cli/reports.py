"""Reports for people: ``card`` (every number behind one overall score) and ``report`` (a static site)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from arena_core.cli.app import State, command, main
from arena_core.cli.inputs import InputFiles, inputs, note_unrecorded, read_inputs
from arena_core.cli.provenances import board_provenance
from arena_core.cli.repeated import parse_ks
from arena_core.cli.selection import Selection, pick_of, selection_options, stored_runs
from arena_core.cli.stores import StoreLocation, open_store
from arena_core.model.errors import ArenaError, closest
from arena_core.model.records import Task
from arena_core.model.serde import to_dict
from arena_core.report.card import cards_for, render_card, score_card
from arena_core.report.site import write_site
from arena_core.stats.runs import check_cluster
from arena_core.store import Store
from arena_core.store.history import stored_baseline
from arena_core.store.standings import submission_columns


@main.command()
@click.argument("submission_id")
@inputs()
@click.option(
    "--store",
    "store_path",
    type=StoreLocation(exists=True),
    help="Explain the score an arena database holds, against the baseline version it was scored with.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@command
def card(state: State, submission_id: str, inputs: InputFiles, store_path: Path | str | None, fmt: str) -> None:
    """Show the score card of SUBMISSION_ID: its figures, the baseline they were normalised
    against, each metric's algorithm and unrounded score, the weights, the difficulty
    adjustment, each criterion's verdict, what was filled in or left out, and the provenance:
    enough to recompute the overall score by hand. With --store, the stored score, explained
    by the baseline version it was scored against (later batches may have moved the baseline).

    \b
    Examples:
      arena card frontend-001/000 --example
      arena card run-42 runs.jsonl --tasks tasks.json --format json
      arena card run-42 --store arena.db
    """
    if store_path is not None:
        if inputs.submissions or inputs.example or inputs.tasks:
            raise click.UsageError("give SUBMISSIONS (or --example) or --store, not both")
        found, task = _stored_card(state, open_store(store_path), store_path, submission_id)
        if fmt == "json":  # the runs of its task, which its baseline was computed from, read for the provenance
            state.runs_read = stored_runs(store_path, task.id)[0]
        click.echo(
            json.dumps(_with_inputs(state, found, {task.id: task}), indent=2) if fmt == "json" else render_card(found)
        )
        return
    subs, tasks = read_inputs(state, inputs)
    ids = [s.id for s in subs]
    if submission_id not in ids:
        raise ArenaError(f"no submission {submission_id!r} in the input{closest(submission_id, ids)}")
    if state.arena.config.baseline_scope != "task":
        raise ArenaError("score cards use per-task baselines: baseline_scope must be 'task'")
    [found] = cards_for(state.arena, subs, tasks, [submission_id])
    click.echo(json.dumps(_with_inputs(state, found, tasks), indent=2) if fmt == "json" else render_card(found))


def _with_inputs(state: State, card: dict[str, Any], tasks: Mapping[str, Task]) -> dict[str, Any]:
    """The card with what it was computed from (the runs of its baseline, the tasks, the
    version, the command) in its provenance, beside how it was scored."""
    return {**card, "provenance": {**(card["provenance"] or {}), **to_dict(board_provenance(state, tasks))}}


def _stored_card(state: State, store: Store, where: Path | str, submission_id: str) -> tuple[dict[str, Any], Task]:
    with store.transaction(write=False) as tx:
        task_id = next((t for t in tx.task_ids() if submission_id in submission_columns(tx, t).ids), None)
    if task_id is None:
        raise ArenaError(f"{where}: no stored submission {submission_id!r}")
    stored, submission, task, baseline = stored_baseline(state.arena, store, task_id, submission_id)
    card = score_card(state.arena, submission, task, baseline, stored)
    return {**card, "baseline_version": baseline.version}, task


@main.command()
@inputs()
@click.option(
    "-o", "--output", type=click.Path(path_type=Path, file_okay=False), required=True, help="The site's folder."
)
@click.option("--by", default="tool", show_default=True, metavar="tool|model|tool,model", help="Group runs by.")
@click.option(
    "--store",
    "store_path",
    type=StoreLocation(),
    help="Report what an arena database holds (see `arena ingest`), with its history, instead of files.",
)
@selection_options
@click.option("--method", help="Aggregator scoring each group (default: leaderboard_method, task_mean).")
@click.option("--cluster", metavar="meta.KEY", help="Tasks come in families named by this key (e.g. meta.repo).")
@click.option("--pass-k", "pass_k", metavar="K,K,...", help="Add pass@k columns over repeated attempts, e.g. 1,2,5.")
@command
def report(
    state: State,
    inputs: InputFiles,
    output: Path,
    by: str,
    store_path: Path | str | None,
    selection: Selection,
    method: str | None,
    cluster: str | None,
    pass_k: str | None,
) -> None:
    """Write the leaderboard as a static site: an index (groups with intervals, sortable columns,
    Pareto charts of correctness against cost and time, paired differences), a page per task
    and a score card per submission; with --store, a history page as well. Self-contained: it
    opens from the file system with no network.

    With --store, the stored submissions are scored afresh against baselines of everything
    stored (as a file of the same runs would be); the history page shows the scores as stored.

    \b
    Examples:
      arena report --example -o site/
      arena -p robust report --example aider --by model -o aider-site/
      arena report --store arena.db -o site/
      arena report --from swebench report.json --by model --cluster meta.repo --where meta.benchmark=lite -o site/
    """
    if by not in ("tool", "model", "tool,model"):
        raise click.UsageError(f"--by {by!r}: expected tool, model or tool,model")
    if state.arena.config.baseline_scope != "task":
        raise ArenaError("score cards use per-task baselines: baseline_scope must be 'task'")
    if cluster is not None:  # checked before any run is scored, as the board checks them
        check_cluster(cluster)
    if method is not None:
        state.arena.components.aggregators[method]  # an unknown name: the registry's error, naming the known ones
    pick = pick_of(state, selection)
    store = None
    if store_path is not None:
        if inputs.submissions or inputs.example or inputs.tasks:
            raise click.UsageError("give SUBMISSIONS (or --example) or --store, not both")
        stored, tasks = stored_runs(store_path)
        note_unrecorded(state, tasks)
        tasks = pick.tasks_of(tasks)
        subs = [s for s in stored if pick.keeps_meta(s.task_id, s.meta, s.model)]
        if not subs:
            raise ArenaError(f"{store_path}: no stored run is kept by the options given")
        store, state.runs_read = open_store(store_path), subs
    else:
        subs, tasks = read_inputs(state, inputs, pick=pick)
    if note := pick.note():
        click.echo(note, err=True)
    scored = None
    if store is not None:  # the store's board: every stored run against its task's current baseline
        mine = set(tasks)
        peers = [s for s in stored if s.task_id in mine]
        scored = (peers, [e for e in state.arena.current_scores(store).evaluations(store) if e.task_id in mine])
    made = to_dict(board_provenance(state, tasks, pick.time))
    pages = write_site(state.arena, subs, tasks, output, by=by, store=store, method=method, cluster=cluster,
                       pass_k=parse_ks(pass_k), models=pick.time.models, scored=scored, provenance=made)  # fmt: skip
    click.echo(f"Wrote {len(pages)} pages to {output}/ (open {output / 'index.html'})", err=True)
