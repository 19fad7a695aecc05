"""Checkers that judge what a submission reports about itself (and the workspace's files when
there is one): ``file_exists``, ``no_errors``, ``harness_verdict``, ``min_functionality`` and
``tests_pass``."""

from __future__ import annotations

import numpy as np

from arena_core.engine.batch import Batch, CheckColumn
from arena_core.engine.columns import all_measured
from arena_core.io.junit import MAX_REPORT_BYTES, parse_junit
from arena_core.model.records import CriterionResult, Submission, SuccessCriterion, Task
from arena_core.workspace.confined import Workspace, WorkspaceError
from arena_core.workspace.reading import OverLimitError
from arena_plugins.checkers.common import (
    EMPTY_INI_PLACEHOLDER,
    JUNIT_PLACEHOLDER,
    NO_RESULTS,
    UNREPORTED,
    command_argv,
    command_timeout,
    failed_at,
    param,
    refuse,
)


class FileExists:
    """Passes when ``file_path`` exists in the workspace; without one, when it is among the
    submission's ``files_created`` (the spec's rule)."""

    type = "file_exists"
    task_independent = True  # check_batch reads the task only to name it in errors
    parameters = ("file_path",)

    def validate(self, criterion: SuccessCriterion, task: Task) -> None:
        param(criterion, task, "file_path", str, "the path of the file that must exist")

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> bool:
        path = param(criterion, task, "file_path", str, "the path of the file that must exist")
        return path in submission.files_created

    def check_batch(self, batch: Batch, criterion: SuccessCriterion, task: Task) -> CheckColumn:
        path = param(criterion, task, "file_path", str, "the path of the file that must exist")
        return CheckColumn.of(batch.has_file(path))

    def check_workspace(
        self, workspace: Workspace, submission: Submission, criterion: SuccessCriterion, task: Task
    ) -> CriterionResult:
        path = param(criterion, task, "file_path", str, "the path of the file that must exist")
        found = workspace.is_file(path)
        return CriterionResult.of(found, "" if found else f"file {path!r} does not exist in the workspace")


class NoErrors:
    """Passes when the workflow reported success."""

    type = "no_errors"
    task_independent = True
    parameters = ()

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> bool:
        return submission.success

    def check_batch(self, batch: Batch, criterion: SuccessCriterion, task: Task) -> CheckColumn:
        return CheckColumn.of(batch.success())


class HarnessVerdict(NoErrors):
    """Passes when the harness that ran the submission judged it resolved: the ``success`` an
    importer set from the harness's own verdict (Terminal-Bench's ``is_resolved``, SWE-bench's
    ``resolved``, an Inspect score of 1, ...). Tasks derived by importers carry this criterion,
    so a correctness-only profile reproduces the harness's accuracy."""

    type = "harness_verdict"


class MinFunctionality:
    """Passes when the reported test pass rate reaches ``min_pass_rate`` (default: any test passes).

    Without reported test results the criterion is ``not_checkable`` and earns nothing.
    """

    type = "min_functionality"
    task_independent = True
    parameters = ("min_pass_rate",)

    def validate(self, criterion: SuccessCriterion, task: Task) -> None:
        if "min_pass_rate" in criterion.params:
            rate = param(criterion, task, "min_pass_rate", (int, float), "a pass rate from 0 to 1")
            if not 0 <= rate <= 1:
                refuse(criterion, task, "min_pass_rate", "a pass rate from 0 to 1", rate)

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> CriterionResult:
        rate = submission.pass_rate
        if rate is None:
            return CriterionResult(self.type, "not_checkable", 0.0, reason=NO_RESULTS)
        if "min_pass_rate" in criterion.params:
            threshold = param(criterion, task, "min_pass_rate", (int, float), "a pass rate from 0 to 1")
            passed = rate >= threshold
            return CriterionResult.of(passed, "" if passed else f"pass rate {rate:g} is below {threshold:g}")
        passed = rate > 0
        return CriterionResult.of(passed, "" if passed else "no test passes")

    def check_batch(self, batch: Batch, criterion: SuccessCriterion, task: Task) -> CheckColumn:
        rate = batch.pass_rate()
        unknown = np.isnan(rate)
        if "min_pass_rate" in criterion.params:
            threshold = param(criterion, task, "min_pass_rate", (int, float), "a pass rate from 0 to 1")
            passed = ~unknown & (rate >= threshold)

            def reason(row: int) -> str:
                return NO_RESULTS if unknown[row] else f"pass rate {rate[row]:g} is below {threshold:g}"
        else:
            passed = ~unknown & (rate > 0)

            def reason(row: int) -> str:
                return NO_RESULTS if unknown[row] else "no test passes"

        status = np.where(unknown, 2, passed.astype(np.int8))
        return CheckColumn(passed.astype(float), status, reason, reason_by=rate)


class TestsPass:
    """Credit equal to the share of tests passed; passed only when all pass.

    With a workspace and a ``command``, the command is run there: when its arguments contain
    ``{junit_xml}``, that is replaced by a fresh path outside the workspace and the JUnit
    report written there is read (a report inside the workspace could have been planted by the
    submission); otherwise the exit status decides (0: all pass). ``{empty_ini}`` is replaced by
    an empty ``pytest.ini`` outside the workspace, for ``-c``. Without either, the
    submission's reported results are used (``tests_passed``/``tests_total``, or ``correctness``).
    """

    type = "tests_pass"
    task_independent = True
    parameters = ("command", "timeout")

    def validate(self, criterion: SuccessCriterion, task: Task) -> None:
        if "command" in criterion.params:
            command_argv(criterion, task)
        command_timeout(criterion, task)

    __test__ = False  # not a pytest test class, despite the name

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> CriterionResult | bool:
        rate = submission.pass_rate
        if rate is None:
            return UNREPORTED
        if rate >= 1.0:
            return True
        return failed_at(rate)

    def check_batch(self, batch: Batch, criterion: SuccessCriterion, task: Task) -> CheckColumn:
        rate = batch.pass_rate()
        passed = rate >= 1.0
        if all_measured(rate):  # every row reported its tests
            return CheckColumn(
                np.minimum(rate, 1.0), passed.astype(np.int8), lambda row: f"pass rate {rate[row]:g}", reason_by=rate
            )
        unknown = np.isnan(rate)
        credit = np.where(unknown, 0.0, np.where(passed, 1.0, rate))
        status = np.where(unknown, 2, passed.astype(np.int8))
        return CheckColumn(
            credit, status, lambda row: NO_RESULTS if unknown[row] else f"pass rate {rate[row]:g}", reason_by=rate
        )

    def check_workspace(
        self, workspace: Workspace, submission: Submission, criterion: SuccessCriterion, task: Task
    ) -> CriterionResult | bool:
        if "command" not in criterion.params:
            return self.check(submission, criterion, task)
        argv, timeout = command_argv(criterion, task), command_timeout(criterion, task)
        scratch = workspace.scratch()
        report, empty_ini = scratch / "junit.xml", scratch / "pytest.ini"
        wants_report = any(JUNIT_PLACEHOLDER in arg for arg in argv)
        if any(EMPTY_INI_PLACEHOLDER in arg for arg in argv):
            empty_ini.write_text("[pytest]\n")
        argv = [
            arg.replace(JUNIT_PLACEHOLDER, str(report)).replace(EMPTY_INI_PLACEHOLDER, str(empty_ini)) for arg in argv
        ]
        result = workspace.run(argv, timeout=timeout)
        limit = timeout or workspace.settings.timeout
        if result.timed_out or result.error:
            return CriterionResult.of(False, result.describe(limit))
        if not wants_report:
            return CriterionResult.of(result.succeeded, "" if result.succeeded else result.describe(limit))
        try:  # read as the command left it: a link to a host file is refused, not followed
            data = workspace.read_scratch(report, MAX_REPORT_BYTES + 1)
            if data is None:
                return CriterionResult.of(False, f"no JUnit report was written ({result.describe(limit)})")
            counts = parse_junit(data)
        except (WorkspaceError, OverLimitError, ValueError) as exc:
            return CriterionResult.of(False, str(exc))
        if counts.total == 0:
            return CriterionResult.of(False, f"no test ran ({counts.skipped} skipped)")
        if counts.failed == 0:
            return True
        return CriterionResult(
            self.type,
            "failed",
            counts.passed / counts.total,
            reason=f"{counts.passed} of {counts.total} tests passed ({counts.skipped} skipped)",
        )
