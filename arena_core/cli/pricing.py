"""``arena reprice``: a store's costs priced again, its scores re-derived, the old ones kept."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import click

from arena_core.arena import Arena
from arena_core.cli.app import State, command, main
from arena_core.cli.stores import open_store, stored_arena_option
from arena_core.io.table import printable
from arena_core.model.checks import TIMESTAMP_EXPECTED, moment
from arena_core.report.comparison import render_text
from arena_core.stats.comparison import Comparison, compare_scorings
from arena_core.stats.runs import labels
from arena_core.store.repricing import Repricing
from arena_core.store.repricing import reprice as reprice_store


@main.command()
@stored_arena_option
@click.option("--date", "price_date", metavar="DATE", help="Price every run at this date (ISO-8601).")
@click.option(
    "--when-missing",
    is_flag=True,
    help="Price only the runs whose harness reported no cost (cost_source = priced_when_missing).",
)
@click.option("--movers", type=click.IntRange(min=0), default=10, show_default=True, help="Largest movers to list.")
@click.option("--by", type=click.Choice(["tool", "model", "tool,model"]), default="tool", show_default=True)
@click.option("--dry-run", is_flag=True, help="Compute and print what would change; write nothing.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@command
def reprice(
    state: State,
    store_path: Path | str,
    price_date: str | None,
    when_missing: bool,
    movers: int,
    by: str,
    dry_run: bool,
    fmt: str,
) -> None:
    """Price a store's runs again and re-derive their stored scores, keeping the old ones.

    Every stored run's cost is priced from its usage and model (price_tables, then price_source)
    at its own date, or at --date for all; the baselines are computed again from the repriced
    runs and stored as new versions, every run is scored and ranked against them, and the
    evaluations replaced are kept as evaluation versions. Prints how the ranking moved (as
    `arena compare` does, the stored scores as A). One transaction: a run that cannot be priced
    keeps its stored cost and is named. --dry-run computes all of it and rolls it back.

    \b
    Examples:
      arena reprice --store arena.db
      arena reprice --store arena.db --date 2025-10-01 --dry-run
      arena -c prices.toml reprice --store arena.db --by model
    """
    if price_date is not None and moment(price_date) is None:
        raise click.BadParameter(f"expected {TIMESTAMP_EXPECTED}, got {price_date!r}", param_hint="--date")
    current = state.arena
    config = attrs.evolve(
        current.config,
        cost_source="priced_when_missing" if when_missing else "priced",
        price_date=price_date if price_date is not None else current.config.price_date,
    )
    arena = Arena(config, profile="repriced", plugin_manager=current.plugin_manager)
    at = f"at {price_date}" if price_date else "at each run's date"
    reason = f"reprice {at} ({config.cost_source}; {arena.pricer.version if arena.pricer else ''})"
    done = reprice_store(arena, open_store(store_path), reason=reason, dry_run=dry_run)
    report = _comparison(current, arena, done, movers, by) if done.after.ids else None
    if fmt == "json":
        body = {
            "dry_run": dry_run,
            "repriced": len(done.after.ids),
            "at": price_date,
            "prices": arena.pricer.version if arena.pricer else None,
            "sources": done.sources,
            "refused": list(done.refused),
            "superseded_at": None if dry_run else done.superseded_at,
            "comparison": report.as_dict() if report is not None else None,
        }
        click.echo(json.dumps(body, indent=2))
        return
    counts = ", ".join(f"{n} {source}" for source, n in sorted(done.sources.items()))
    verb = "Would reprice" if dry_run else "Repriced"
    prices = arena.pricer.version if arena.pricer else "-"
    click.echo(f"{verb} {len(done.after.ids)} stored runs {at} ({counts}); prices: {prices}")
    if dry_run:
        click.echo("Dry run: nothing was written (the store is as it was).")
    else:
        click.echo(
            f"The {len(done.before.ids)} scores replaced are kept as evaluation versions ({done.superseded_at})."
        )
    if done.refused:
        shown = "".join(f"\n  {printable(reason)}" for reason in done.refused[:20])
        more = f"\n  and {len(done.refused) - 20} more" if len(done.refused) > 20 else ""
        click.echo(f"{len(done.refused)} stored runs could not be priced and keep their stored cost:{shown}{more}")
    if report is not None:
        click.echo(render_text(report), nl=False)


def _comparison(current: Arena, arena: Arena, done: Repricing, movers: int, by: str) -> Comparison:
    """How the ranking moves from the stored scores (A) to the repriced ones (B)."""
    after = done.after
    names = labels(by, after.tools, done.models, after.ids, aliases=arena.config.model_aliases)
    provenance = done.stored_provenance or current.provenance
    return compare_scorings(
        ("stored", attrs.evolve(done.before, tools=names), provenance),
        ("repriced", attrs.evolve(after, tools=names), arena.provenance),
        movers=movers,
        by=by,
    )
