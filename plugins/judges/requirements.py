"""A ``judge`` criterion's requirements: read and checked from the task, and their verdicts once
prerequisites count (DevAI's rule) and, where people labelled them, the people's majority."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arena_core.model.errors import ValidationError
from arena_core.model.judging import Requirement
from arena_core.model.labels import votes_verdict
from arena_core.model.records import SuccessCriterion, Task

__all__ = ["people_verdict", "prerequisite_reason", "requirements_of", "with_prerequisites"]


def requirements_of(criterion: SuccessCriterion, task: Task) -> tuple[Requirement, ...]:
    """The criterion's requirements, checked: ids used once, prerequisites that exist and form no cycle.

    :raises ValidationError: naming the task and the field.
    """
    where = f"task {task.id!r}"
    given = criterion.params.get("requirements")
    if not isinstance(given, (list, tuple)) or not given:
        raise ValidationError(where, "requirements", "a list of requirements ({id, criteria, prerequisites})", given)
    found: list[Requirement] = []
    for index, item in enumerate(given):
        at = f"requirements.{index}"
        if not isinstance(item, Mapping):
            raise ValidationError(where, at, "a requirement ({id, criteria, prerequisites})", item)
        ident = item.get("id", item.get("requirement_id"))
        if isinstance(ident, bool) or not isinstance(ident, (str, int)) or str(ident) == "":
            raise ValidationError(where, f"{at}.id", "the requirement's id (a name or a number)", ident)
        text = item.get("criteria")
        if not isinstance(text, str) or not text.strip():
            raise ValidationError(where, f"{at}.criteria", "what must hold, in words", text)
        needs = item.get("prerequisites", ())
        if not isinstance(needs, (list, tuple)) or any(
            isinstance(n, bool) or not isinstance(n, (str, int)) for n in needs
        ):
            raise ValidationError(where, f"{at}.prerequisites", "a list of requirement ids", needs)
        category = item.get("category")
        found.append(
            Requirement(str(ident), text, tuple(str(n) for n in needs), category if isinstance(category, str) else None)
        )
    ids = [r.id for r in found]
    for index, requirement in enumerate(found):
        if ids.count(requirement.id) > 1:
            raise ValidationError(where, f"requirements.{index}.id", "an id used once", requirement.id)
        for need in requirement.prerequisites:
            if need not in ids:
                raise ValidationError(
                    where,
                    f"requirements.{index}.prerequisites",
                    f"ids of this criterion's requirements ({', '.join(ids)})",
                    need,
                )
    cycle = _cycle(found)
    if cycle:
        raise ValidationError(where, "requirements", "prerequisites that form no cycle", " -> ".join(cycle))
    return tuple(found)


def _cycle(requirements: Sequence[Requirement]) -> list[str]:
    """A cycle of prerequisites (as ids, the first again at the end), or ``[]``."""
    needs = {r.id: r.prerequisites for r in requirements}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for need in needs[node]:
            if state.get(need) == 1:
                return [*path[path.index(need) :], need]
            if need not in state and (found := visit(need)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in needs:
        if node not in state and (found := visit(node)):
            return found
    return []


def with_prerequisites(requirements: Sequence[Requirement], own: Mapping[str, str]) -> dict[str, str]:
    """Each requirement's verdict once its prerequisites count: unmet when one of them is unmet,
    unscored when one is unscored (and it is not unmet itself)."""
    final: dict[str, str] = {}
    needs = {r.id: r.prerequisites for r in requirements}

    def settle(node: str) -> str:
        if node not in final:
            before = [settle(n) for n in needs[node]]
            if own[node] == "unmet" or "unmet" in before:
                final[node] = "unmet"
            elif own[node] == "unscored" or "unscored" in before:
                final[node] = "unscored"
            else:
                final[node] = "met"
        return final[node]

    for requirement in requirements:
        settle(requirement.id)
    return final


def prerequisite_reason(requirement: Requirement, final: Mapping[str, str]) -> str:
    verdict = final[requirement.id]
    pending = [n for n in requirement.prerequisites if final[n] == verdict]
    which = f"prerequisite {pending[0]} is" if len(pending) == 1 else f"prerequisites {', '.join(pending)} are"
    return f"counts as {verdict}: its {which} {verdict}"


def people_verdict(votes: tuple[int, int] | None) -> str | None:
    """The people's verdict of a requirement from its ``(met, unmet)`` raters: ``met`` or
    ``unmet`` by their majority; ``None`` without labels or on a tie (the judges' verdict stands)."""
    found = None if votes is None else votes_verdict(votes)
    return None if found is None else "met" if found else "unmet"
