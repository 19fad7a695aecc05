"""Notes where a board's grouping misleads: a tool holding runs of several models, ranked (or
read for repeated attempts) as one group."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

import click

from arena_core.model.records import Evaluation

__all__ = ["mixed_models_note"]


def mixed_models_note(
    evaluations: Iterable[Evaluation], by: str, aliases: Mapping[str, str], *, attempts: bool
) -> None:
    """Under ``--by tool``, say on stderr which tools hold runs of several models: each is one
    group, its models' runs pooled (``attempts``: and read as repeated attempts of one group, so
    a task the models split on looks flaky); ``--by model`` or ``--by tool,model`` ranks them apart."""
    if by != "tool":
        return
    models: dict[str, set[str]] = defaultdict(set)
    for evaluation in evaluations:
        if evaluation.tool is not None and evaluation.model is not None:
            models[evaluation.tool].add(aliases.get(evaluation.model, evaluation.model))
    mixed = sorted(
        ((tool, len(found)) for tool, found in models.items() if len(found) > 1), key=lambda x: (-x[1], x[0])
    )
    if not mixed:
        return
    named = ", ".join(f"{tool} ({count} models)" for tool, count in mixed[:5]) + (
        f" and {len(mixed) - 5} more" if len(mixed) > 5 else ""
    )
    pooled = "their runs read as attempts of one group (a task the models split on looks flaky)" if attempts else (
        "each ranked as one group"
    )  # fmt: skip
    click.echo(
        f"note: {named} hold runs of several models, {pooled}: --by model or --by tool,model ranks the models apart",
        err=True,
    )
