"""Re-pricing a store: its runs' costs priced again (a new table, a fixed date), their scores
re-derived, the superseded ones kept.

Every stored run is priced by the arena's :class:`~arena_core.pricing.pricer.Pricer` from the
figure its harness reported (``meta.pricing.reported`` once priced), each task's baselines are
computed again from the repriced runs and stored as their next versions, and every run is scored
against them and ranked. The evaluations this replaces are kept among the store's evaluation
versions with the reason and time, so the scores before are still there to read and compare.
It is one transaction, taken a task at a time: what a re-pricing returns is the two scorings as
columns (:class:`~arena_core.stats.deltas.Side`), never an object per run, so a million stored
runs are repriced in the memory of one task's runs. A run that cannot be priced (a model or provider no price table knows)
fails alone: it keeps the cost stored for it, is scored against its task's new baselines like
the others, and is named in :attr:`Repricing.refused` with the reason; the rest are repriced.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from attrs import frozen

from arena_core.model.errors import ArenaError, ValidationError
from arena_core.model.records import Evaluation
from arena_core.stats.deltas import Side
from arena_core.store.pipeline import rederive
from arena_core.store.standings import put_all

if TYPE_CHECKING:
    from arena_core.arena import Arena
    from arena_core.model.provenance import Provenance
    from arena_core.store import Store

__all__ = ["Repricing", "reprice"]


@frozen
class Repricing:
    """What a re-pricing changed."""

    before: Side
    """The scores it superseded (kept as evaluation versions), as columns in the order of ``after``."""
    after: Side
    """The scores stored now, one row per stored run."""
    models: tuple[str | None, ...]
    """Each run's model, in the order of ``after``."""
    stored_provenance: Provenance | None
    """The provenance the superseded scores were computed with (``None``: no run was stored)."""
    sources: dict[str, int]
    """How many runs' costs were ``priced``, ``reported`` (kept), ``unpriced`` and ``refused``
    (could not be priced: their stored cost is kept)."""
    reason: str
    superseded_at: str
    refused: tuple[str, ...] = ()
    """Per run that could not be priced, the error naming it and what was missing."""
    dry_run: bool = False
    """Whether it was only computed: the store was left as it was."""


def _keeper(tx: Any) -> Any:
    if getattr(tx, "keep_evaluation_version", None) is None:
        raise ArenaError(
            "this store keeps no evaluation versions (its transactions have no keep_evaluation_version "
            "method): re-pricing would lose the scores it replaces"
        )
    return tx


class _DryRun(Exception):
    """Raised at the end of a dry run's transaction, so that the store rolls all of it back."""


def reprice(arena: Arena, store: Store, *, reason: str, dry_run: bool = False) -> Repricing:
    """Price every stored run with ``arena``'s pricing and re-derive the stored scores.

    :param reason: recorded with every superseded evaluation (e.g. ``"reprice at 2025-10-01"``).
    :param dry_run: compute everything in the transaction, then roll it back: the store is
        left as it was, and the result says what a re-pricing would change.
    :raises ArenaError: the arena does not price (``cost_source = "reported"``), or the store
        keeps no evaluation versions.
    """
    if arena.pricer is None:
        raise ArenaError('re-pricing needs cost_source = "priced" or "priced_when_missing" in the configuration')
    stamp = datetime.now(UTC).isoformat()
    before: list[Side] = []
    after: list[Side] = []
    models: list[str | None] = []
    sources: dict[str, int] = {}
    refused: list[str] = []
    provenance: Provenance | None = None
    try:
        with store.transaction() as tx:
            for old, fresh in _reprice_in(arena, tx, reason, stamp, sources, refused):
                provenance = old[0].provenance if not before else provenance
                before.append(Side.of(old))
                after.append(Side.of(fresh))
                models += [e.model for e in fresh]
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    return Repricing(
        Side.concat(before), Side.concat(after), tuple(models), provenance,
        sources, reason, stamp, tuple(refused), dry_run,
    )  # fmt: skip


def _reprice_in(
    arena: Arena,
    tx: Any,
    reason: str,
    stamp: str,
    sources: dict[str, int],
    refused: list[str],
) -> Iterator[tuple[list[Evaluation], list[Evaluation]]]:
    """Re-price and re-derive every task of the transaction ``tx``, counting the sources and
    the refusals; per task, its superseded evaluations and the new ones, in the same order."""
    pricer = arena.pricer
    assert pricer is not None  # reprice() checked it
    keeper = _keeper(tx)
    for task_id in tx.task_ids():
        task = tx.get_task(task_id)
        runs = tx.submissions(task_id)
        if task is None or not runs:
            continue
        priced = []
        for run in runs:
            try:
                run = pricer.price(run)
                source = run.meta["pricing"]["source"]
            except ValidationError as error:  # this run alone keeps its stored cost
                refused.append(str(error))
                source = "refused"
            sources[source] = sources.get(source, 0) + 1
            priced.append(run)
        old = {e.submission_id: e for e in tx.evaluations(task_id)}
        unscored = [s.id for s in runs if s.id not in old]
        if unscored:
            raise ArenaError(f"task {task_id!r}: stored runs without a stored evaluation: {', '.join(unscored[:5])}")
        put_all(keeper, "evaluation_version", list(old.values()), reason, stamp, verb="keep")
        fresh = rederive(arena, tx, task, priced, stamp)
        yield [old[e.submission_id] for e in fresh], fresh
