"""Notes where a board's grouping misleads: a tool holding runs of several models, ranked (or
read for repeated attempts) as one group; one model under several spellings, ranked as several."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

import click

from arena_core.engine.results import EvaluationBatch
from arena_core.model.records import Evaluation

__all__ = ["mixed_models_note", "model_key", "spellings_note"]


def mixed_models_note(
    evaluations: Iterable[Evaluation], by: str, aliases: Mapping[str, str], *, attempts: bool
) -> None:
    """Under ``--by tool``, say on stderr which tools hold runs of several models: each is one
    group, its models' runs pooled (``attempts``: and read as repeated attempts of one group, so
    a task the models split on looks flaky); ``--by model`` or ``--by tool,model`` ranks them apart."""
    if by != "tool":
        return
    models: dict[str, set[str]] = defaultdict(set)
    for tool, model in _tools_and_models(evaluations):
        if tool is not None and model is not None:
            models[tool].add(aliases.get(model, model))
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


#: What a model's name may carry beyond the model: a snapshot date (``-20250514``,
#: ``-2025-05-14``, ``@20250514``), ``-latest``, and a ``.0`` version written ``-0``
#: (``claude-sonnet-4-0``).
_SUFFIXES = re.compile(r"(?:[-@](?:\d{8}|\d{4}-\d{2}-\d{2})|-latest|(?<=\d)-0)$")


def model_key(name: str) -> str:
    """What one model's spellings share: lower case, without the provider or router prefixes
    (``anthropic/``, ``openai/neulab/``) and the suffixes of :data:`_SUFFIXES`."""
    key = name.lower().rsplit("/", 1)[-1]
    while (shorter := _SUFFIXES.sub("", key)) != key:
        key = shorter
    return key


def spellings_note(evaluations: Iterable[Evaluation], by: str, aliases: Mapping[str, str]) -> None:
    """Under a grouping by model, say on stderr which models look like one under several
    spellings (ranked apart today), with the ``[model_aliases]`` lines that would merge them into
    the spelling most of their runs use. Only a suggestion: a dated snapshot may be a model of
    its own, which the note cannot know."""
    if "model" not in by.split(","):
        return
    runs = Counter(aliases.get(model, model) for _, model in _tools_and_models(evaluations) if model is not None)
    families: dict[str, list[str]] = defaultdict(list)
    for name in runs:
        families[model_key(name)].append(name)
    alike = [sorted(names, key=lambda n: (-runs[n], n)) for names in families.values() if len(names) > 1]
    if not alike:
        return
    lines = [f'"{other}" = "{names[0]}"' for names in sorted(alike) for other in names[1:]]
    click.echo(
        "note: these spellings look like one model, ranked apart: "
        + "; ".join(", ".join(names) for names in sorted(alike))
        + ". To rank each as one, add to arena.toml:\n[model_aliases]\n"
        + "\n".join(lines),
        err=True,
    )


def _tools_and_models(evaluations: Iterable[Evaluation]) -> Iterable[tuple[str | None, str | None]]:
    """Each evaluation's tool and model: read from a batch's columns when it has them (building
    an evaluation per run to read two fields took 12 s of 200,000 runs)."""
    if isinstance(evaluations, EvaluationBatch):
        return zip(evaluations.tools, evaluations.models, strict=True)
    return ((e.tool, e.model) for e in evaluations)
