"""The spec's criterion checkers, judged on what the submission reports about itself.

``file_exists`` and ``no_errors`` are the spec's. ``min_functionality`` is a placeholder
returning True in the spec; here it checks the submission's reported test results, and
``tests_pass`` gives partial credit by the share of tests passed (the shape public
leaderboards publish). A criterion that cannot be checked because the submission reports
nothing to check it against earns nothing and says so: it is never a silent pass.
"""

from __future__ import annotations

import numpy as np

from arena_core import hookimpl
from arena_core.batch import Batch, CheckColumn
from arena_core.errors import ValidationError
from arena_core.models import CriterionResult, SuccessCriterion, Submission, Task

_NO_RESULTS = "the submission reports no test results (tests_passed and tests_total, or correctness)"
_UNREPORTED = CriterionResult("tests_pass", "not_checkable", 0.0, reason=_NO_RESULTS)


def _param(criterion: SuccessCriterion, task: Task, key: str, kind: type, expected: str) -> object:
    value = criterion.params.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        index = task.success_criteria.index(criterion)
        raise ValidationError(f"task {task.id!r}", f"success_criteria.{index}.{key}", expected, value)
    return value


class FileExists:
    """Passes when ``file_path`` is among the submission's ``files_created``."""

    type = "file_exists"

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> bool:
        path = _param(criterion, task, "file_path", str, "the path of the file that must exist")
        return path in submission.files_created

    def check_batch(self, batch: Batch, criterion: SuccessCriterion, task: Task) -> CheckColumn:
        path = _param(criterion, task, "file_path", str, "the path of the file that must exist")
        return CheckColumn.of(batch.has_file(path))


class NoErrors:
    """Passes when the workflow reported success."""

    type = "no_errors"

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> bool:
        return submission.success

    def check_batch(self, batch: Batch, criterion: SuccessCriterion, task: Task) -> CheckColumn:
        return CheckColumn.of(batch.success())


class MinFunctionality:
    """Passes when the reported test pass rate reaches ``min_pass_rate`` (default: any test passes).

    Without reported test results the criterion is ``not_checkable`` and earns nothing.
    """

    type = "min_functionality"

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> CriterionResult:
        rate = submission.pass_rate
        if rate is None:
            return CriterionResult(self.type, "not_checkable", 0.0, reason=_NO_RESULTS)
        if "min_pass_rate" in criterion.params:
            threshold = _param(criterion, task, "min_pass_rate", (int, float), "a pass rate from 0 to 1")
            passed = rate >= threshold  # type: ignore[operator]
            return CriterionResult.of(passed, "" if passed else f"pass rate {rate:g} is below {threshold:g}")
        passed = rate > 0
        return CriterionResult.of(passed, "" if passed else "no test passes")

    def check_batch(self, batch: Batch, criterion: SuccessCriterion, task: Task) -> CheckColumn:
        rate = batch.pass_rate()
        unknown = np.isnan(rate)
        if "min_pass_rate" in criterion.params:
            threshold = _param(criterion, task, "min_pass_rate", (int, float), "a pass rate from 0 to 1")
            passed = ~unknown & (rate >= threshold)

            def reason(row: int) -> str:
                return _NO_RESULTS if unknown[row] else f"pass rate {rate[row]:g} is below {threshold:g}"
        else:
            passed = ~unknown & (rate > 0)

            def reason(row: int) -> str:
                return _NO_RESULTS if unknown[row] else "no test passes"

        status = np.where(unknown, 2, passed.astype(np.int8))
        return CheckColumn(passed.astype(float), status, reason)


class TestsPass:
    """Credit equal to the reported share of tests passed; passed only when all pass."""

    type = "tests_pass"
    __test__ = False  # not a pytest test class, despite the name

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> CriterionResult | bool:
        rate = submission.pass_rate
        if rate is None:
            return _UNREPORTED
        if rate >= 1.0:
            return True
        return CriterionResult(self.type, "failed", rate, reason=f"pass rate {rate:g}")

    def check_batch(self, batch: Batch, criterion: SuccessCriterion, task: Task) -> CheckColumn:
        rate = batch.pass_rate()
        unknown = np.isnan(rate)
        passed = rate >= 1.0
        credit = np.where(unknown, 0.0, np.where(passed, 1.0, rate))
        status = np.where(unknown, 2, passed.astype(np.int8))
        return CheckColumn(credit, status, lambda row: _NO_RESULTS if unknown[row] else f"pass rate {rate[row]:g}")


@hookimpl
def arena_register_criterion_checkers() -> list[object]:
    return [FileExists(), NoErrors(), MinFunctionality(), TestsPass()]
