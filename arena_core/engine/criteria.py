"""A task's criteria checked before any work: each names a registered checker, with parameters
it accepts and values it validates."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from arena_core.model.errors import ValidationError, closest
from arena_core.model.protocols import CriterionChecker
from arena_core.model.records import Task

__all__ = ["check_criteria"]


def check_criteria(
    task: Task,
    checkers: Mapping[str, CriterionChecker],
    absence: Callable[[str], str],
    checked: dict[int, object],
) -> None:
    """Refuse a criterion of ``task`` that names no registered checker, or parameters its
    checker does not accept. Checkers declare what they accept with ``parameters`` (a tuple of
    names) and check the values with ``validate(criterion, task)``; both are optional.

    :param absence: why a checker may be absent although installed (disabled, blocked), for the error.
    :param checked: criteria that passed, by identity (criteria are frozen, and tasks read from
        files share equal ones): each is validated once, not once per task.
    """
    criteria = task.success_criteria
    if checked.get(id(criteria)) is criteria:  # tasks of one kind share their criteria tuple
        return
    for index, criterion in enumerate(criteria):
        if checked.get(id(criterion)) is criterion:
            continue
        checker = checkers.get(criterion.type)
        if checker is None:
            raise ValidationError(
                f"task {task.id!r}",
                f"success_criteria.{index}.type",
                f"a registered criterion type ({', '.join(checkers)}){closest(criterion.type, checkers)}"
                + absence(criterion.type),
                criterion.type,
            )
        declared = getattr(checker, "parameters", None)
        if declared is not None:
            for key in criterion.params:
                if key not in declared:
                    accepted = ", ".join(declared) or "none"
                    raise ValidationError(
                        f"task {task.id!r}",
                        f"success_criteria.{index}.{key}",
                        f"a parameter of {criterion.type!r} ({accepted}){closest(key, declared)}",
                        criterion.params[key],
                    )
        validate = getattr(checker, "validate", None)
        if validate is not None:
            validate(criterion, task)
        if len(checked) >= 4096:
            checked.clear()
        checked[id(criterion)] = criterion  # held, so its id is not reused while kept
    checked[id(criteria)] = criteria
