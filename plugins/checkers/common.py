"""What the built-in checkers share: reading a criterion's parameters (a bad one is an error
naming the task, the criterion and the parameter), running its command in the workspace, and
the verdicts for what cannot be checked."""

from __future__ import annotations

from functools import lru_cache
from typing import NoReturn, TypeVar

import numpy as np

from arena_core.engine.batch import Batch, CheckColumn
from arena_core.model.errors import ValidationError
from arena_core.model.records import CriterionResult, SuccessCriterion, Task
from arena_core.workspace.confined import Workspace

NO_RESULTS = "the submission reports no test results (tests_passed and tests_total, or correctness)"
UNREPORTED = CriterionResult("tests_pass", "not_checkable", 0.0, reason=NO_RESULTS)


NO_WORKSPACE = "needs the submission's workspace; the submission names none"
#: Replaced, in a command's arguments, by a fresh path outside the workspace for the JUnit report.
JUNIT_PLACEHOLDER = "{junit_xml}"
#: Replaced by the path of an empty ``pytest.ini`` outside the workspace: ``-c {empty_ini}`` keeps
#: the workspace's own pytest configuration out (pytest 9 refuses ``-c /dev/null``).
EMPTY_INI_PLACEHOLDER = "{empty_ini}"


T = TypeVar("T")


def param(criterion: SuccessCriterion, task: Task, key: str, kind: type[T] | tuple[type[T], ...], expected: str) -> T:
    value = criterion.params.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        refuse(criterion, task, key, expected, value)
    return value


def refuse(criterion: SuccessCriterion, task: Task, key: str, expected: str, value: object) -> NoReturn:
    index = task.success_criteria.index(criterion)
    raise ValidationError(f"task {task.id!r}", f"success_criteria.{index}.{key}", expected, value)


def command_argv(criterion: SuccessCriterion, task: Task) -> list[str]:
    """The criterion's ``command``: a non-empty list of strings (commands never go through a shell)."""
    value = criterion.params.get("command")
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(a, str) and a for a in value):
        refuse(criterion, task, "command", 'a list of arguments, e.g. ["python", "-m", "pytest"] (no shell)', value)
    return list(value)


def command_timeout(criterion: SuccessCriterion, task: Task) -> float | None:
    if "timeout" not in criterion.params:
        return None
    value = criterion.params["timeout"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        refuse(criterion, task, "timeout", "a number of seconds > 0", value)
    return float(value)


def run_command(workspace: Workspace, criterion: SuccessCriterion, task: Task) -> CriterionResult:
    """Run the criterion's ``command`` in the workspace: passed on exit status 0, else failed with
    what happened (exit status and output, a timeout, or why it could not start)."""
    timeout = command_timeout(criterion, task)
    result = workspace.run(command_argv(criterion, task), timeout=timeout)
    return CriterionResult.of(
        result.succeeded, "" if result.succeeded else result.describe(timeout or workspace.settings.timeout)
    )


@lru_cache(maxsize=4096)
def failed_at(rate: float) -> CriterionResult:
    """The ``tests_pass`` verdict for a pass rate below 1, made once per rate: results are
    frozen, and runs of a task report the same few rates."""
    return CriterionResult("tests_pass", "failed", rate, reason=f"pass rate {rate:g}")


def not_checkable(batch: Batch, reason: str) -> CheckColumn:
    """Every row not checkable (the batch path never carries workspaces)."""
    size = batch.size
    return CheckColumn(np.zeros(size), np.full(size, 2, dtype=np.int8), lambda row: reason, np.zeros(size, np.int8))


def needs_workspace(criterion: SuccessCriterion) -> CriterionResult:
    return CriterionResult(criterion.type, "not_checkable", 0.0, criterion.weight, NO_WORKSPACE)
