"""Judges: what a model (or a person, or another tool) says of whether a run met a requirement.

A task whose success is "the feature works as the issue asked" has no command to run: it is
judged, requirement by requirement, by judges configured by name (``[judges.NAME]`` tables,
built by the provider each names; see ``arena_register_judges``). A judge answers one request
at a time: a requirement of a run, with the prompt made from it and the evidence. Its answer is
met, not met, or nothing (it could not answer: the requirement is then unscored, never failed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol, runtime_checkable

from attrs import frozen

__all__ = ["Judge", "JudgeProvider", "JudgeReply", "JudgeRequest", "Requirement", "Usage", "Verdict"]

#: A requirement's verdict, after a judge or a panel: ``met``, ``unmet`` or ``unscored``.
Verdict = Literal["met", "unmet", "unscored"]


@frozen
class Requirement:
    """One requirement of a ``judge`` criterion (DevAI's shape)."""

    id: str
    criteria: str
    """What must hold, in words the judge reads."""
    prerequisites: tuple[str, ...] = ()
    """Requirements that must be met for this one to count as met (DevAI's dependency rule)."""
    category: str | None = None


@frozen
class Usage:
    """The tokens one request to a model judge spent."""

    input_tokens: int = 0
    """Prompt tokens, cached ones included."""
    output_tokens: int = 0
    cache_read_tokens: int = 0


@frozen
class JudgeRequest:
    """What a judge is asked: one requirement of one run."""

    submission_id: str
    task_id: str
    requirement: Requirement
    prompt: str
    """The rendered prompt: the requirement and the run's evidence, delimited."""
    model: str | None = None
    """The run's model, for judges that must not judge their own family's work."""


@frozen
class JudgeReply:
    """A judge's answer: ``satisfied`` is ``None`` when it gave none (``error`` says why)."""

    satisfied: bool | None
    reason: str = ""
    usage: Usage | None = None
    error: str = ""
    """Why there is no verdict: a reply that could not be parsed, a refusal, an HTTP error,
    a time-out (after the judge's own retries), or a verdict the source does not hold."""
    attempts: int = 1


@runtime_checkable
class Judge(Protocol):
    """A configured judge (one ``[judges.NAME]`` table).

    ``identity`` is what makes two of its answers interchangeable: provider, model and every
    parameter that changes a reply (temperature, the prompt template's hash, ...); the verdict
    cache is keyed by it. ``model`` names the judging model (``None`` for a person or a file),
    for pricing its usage and for refusing to let it judge its own family's runs. ``ask`` never
    raises for a failed request: it answers ``satisfied = None`` with the reason.
    """

    name: str
    model: str | None
    provider: str

    @property
    def identity(self) -> Mapping[str, Any]: ...

    def ask(self, request: JudgeRequest) -> JudgeReply: ...


@runtime_checkable
class JudgeProvider(Protocol):
    """Builds judges of one kind from their ``[judges.NAME]`` tables (``provider = "NAME"``).

    ``build(name, settings)`` returns the judge, or raises
    :class:`~arena_core.model.errors.ValidationError` naming ``judges.NAME.KEY`` for a bad setting.
    """

    name: str

    def build(self, name: str, settings: Mapping[str, Any]) -> Judge: ...
