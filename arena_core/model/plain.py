"""The common submission and task records, structured without the converter.

Most records a host or a file gives are plain: known keys, each value of exactly its field's
type. Those are built straight from the model (its validators still run); anything else goes to
the converter of :mod:`arena_core.model.serde`, which structures it or refuses it with its
usual error. ``tests/test_models.py`` checks that both ways give the same model or error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena_core.model.checks import MAX_FIGURE
from arena_core.model.errors import ValidationError
from arena_core.model.records import RUN_DETAILS, TOKEN_BREAKDOWN, Submission, SuccessCriterion, Task
from arena_core.model.scalars import MAX_NESTING, nesting

__all__ = ["plain_submission", "plain_task"]

#: A submission's fields by what the converter makes of them (see :func:`plain_submission`).
_SUBMISSION_FIELDS: dict[str, type] = {
    **dict.fromkeys(("id", "task_id", "tool", "model", *RUN_DETAILS), str),
    **dict.fromkeys(("total_tokens", "tool_calls", "iterations", "tests_passed", "tests_total", *TOKEN_BREAKDOWN), int),
    **dict.fromkeys(("execution_time", "estimated_cost", "correctness"), float),
    "success": bool,
    "files_created": tuple,
}


def plain_submission(data: dict[str, Any]) -> Submission | None:
    """The common record, structured without the converter: known keys only, each value of
    exactly the type its field takes (an int for a float field is made a float, as the converter
    does; ``meta`` a dict nested no deeper than the converter allows), then the model's own validators. ``None`` for anything else (extra keys, a workspace,
    a ``3.0`` for a count, an invalid value), which the converter then structures or refuses
    with its usual error. A third of the converter's time for a typical record."""
    fields: dict[str, Any] = {}
    for key, value in data.items():
        kind = _SUBMISSION_FIELDS.get(key)
        given = type(value)
        if key == "meta":  # what an importer records of the run, as the converter takes it
            if given is not dict or nesting(value) > MAX_NESTING:
                return None
            fields[key] = value
        elif kind is tuple:
            if given not in (list, tuple) or not all(type(item) is str for item in value):
                return None
            fields[key] = tuple(value)
        elif given is kind or (value is None and kind is not None and kind is not bool):
            fields[key] = value
        elif kind is float and given is int and -MAX_FIGURE <= value <= MAX_FIGURE:
            fields[key] = float(value)
        else:
            return None
    try:
        return Submission(**fields)
    except (ValidationError, TypeError):  # the converter says it as it always does
        return None


_NAME_OR_NONE = (str, type(None))


def plain_task(
    data: dict[str, Any], structure_criteria: Callable[[list[Any] | tuple[Any, ...]], tuple[SuccessCriterion, ...]]
) -> Task | None:
    """Like :func:`plain_submission`, for a task: ``id``, ``category`` and ``difficulty`` as
    strings (or ``None``), ``success_criteria`` as a list of criteria, structured by
    ``structure_criteria`` (the converter's own), and ``meta`` as a dict. ``None`` for anything else."""
    if not data.keys() <= _TASK_FIELDS:
        return None
    get = data.get
    if not (
        type(get("id")) in _NAME_OR_NONE
        and type(get("category")) in _NAME_OR_NONE
        and type(get("difficulty")) in _NAME_OR_NONE
    ):
        return None
    fields = dict(data)
    criteria = fields.pop("success_criteria", ())
    if type(criteria) not in (list, tuple):
        return None
    try:
        fields["success_criteria"] = structure_criteria(criteria)
    except Exception:  # the converter names the criterion and field
        return None
    if "meta" in fields:
        if type(fields["meta"]) is not dict or nesting(fields["meta"]) > MAX_NESTING:
            return None
        fields["meta"] = dict(fields["meta"])
    try:
        return Task(**fields)
    except (ValidationError, TypeError):
        return None


_TASK_FIELDS = frozenset(("id", "category", "difficulty", "success_criteria", "meta"))
