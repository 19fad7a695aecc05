"""Scoring submissions one at a time: the path for workspaces to check and for components
without a batch form.

Submissions with workspaces are checked ``check_concurrency`` at a time by the configured check
executor: their commands run outside the interpreter, so threads overlap them, and a remote
executor (Dask) rebuilds the Arena on its workers. The first error raised is re-raised after the
running ones finish.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from arena_core.engine.ahead import all_found_ahead
from arena_core.model.errors import ArenaError
from arena_core.model.protocols import Metric, Score
from arena_core.model.records import Baseline, Evaluation, Submission, Task

if TYPE_CHECKING:
    from arena_core.engine.scoring import Scorer

__all__ = ["evaluate_each"]


def evaluate_each(
    scorer: Scorer,
    items: Sequence[tuple[Submission, Task, Baseline]],
    evaluated_at: str,
    gated: tuple[np.ndarray, Sequence[Score | None]] | None = None,
) -> list[Evaluation]:
    """:meth:`Scorer.evaluate` for each ``(submission, task, baseline)``, in order; metrics with a
    per-baseline preparation are prepared once per baseline and weight profile.

    :param gated: the second pass under a gate (see :mod:`arena_core.engine.gating`): per item,
        whether no run of its task passed the gate, and the gate's result of the first pass.
        Nothing is checked in a workspace again, so the items are scored here, in order.
    """
    ready: dict[tuple[int, str], Mapping[str, Metric]] = {}

    def one(index: int) -> Evaluation:
        submission, task, baseline = items[index]
        metrics = scorer.metrics_in_use()
        if scorer.preparing:
            profile = scorer.profile_for(task)
            key = (id(baseline), profile.name)  # every baseline stays alive in ``items``
            if key not in ready:
                ready[key] = scorer.prepared(baseline, profile)
            metrics = ready[key]
        if gated is None:
            return scorer.evaluate(submission, task, baseline, evaluated_at, metrics)
        unsolved, gates = gated
        return scorer.evaluate(
            submission, task, baseline, evaluated_at, metrics, gate=gates[index], unsolved=bool(unsolved[index])
        )

    workers = scorer.config.check_concurrency
    everything = range(len(items))
    if (
        gated is not None
        or workers == 1
        or len(items) < 2
        or not any(s.workspace is not None for s, _, _ in items)
        or all_found_ahead(items, scorer)  # checked before the transaction: only scores are left
    ):
        return [one(index) for index in everything]
    executor = scorer.check_executor
    if executor is None:
        return [one(index) for index in everything]
    if getattr(executor, "local", False):
        with executor.start(workers) as pool:
            return list(pool.map(one, everything))
    if scorer.remote_job is None:
        raise ArenaError(
            f"check_executor {executor.name!r} rebuilds the Arena on its workers from the configuration, "
            "which an Arena given its own plugin manager cannot be"
        )
    with executor.start(workers) as pool:
        futures = [pool.submit(scorer.remote_job, s, t, b, evaluated_at) for s, t, b in items]
        return [future.result() for future in futures]
