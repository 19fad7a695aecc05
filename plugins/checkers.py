"""The built-in criterion checkers: on the submission's workspace when it has one, else on
what the submission reports about itself.

``file_exists`` and ``no_errors`` are the spec's. ``min_functionality`` is a placeholder
returning True in the spec; here it checks the submission's reported test results.
``tests_pass`` runs the task's test command in the workspace (reading a JUnit report when the
command writes one) or, without a workspace, uses the reported results, as public leaderboards
publish them; both give partial credit by passed/total. ``file_contains``, ``code_compiles``
and ``command_succeeds`` need the workspace.

A criterion that cannot be checked (no workspace, nothing reported) earns nothing and says
so: it is never a silent pass. Commands come only from the task's criterion parameters, as
lists of arguments (no shell), and run through the configured command runner.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, NoReturn, TypeVar

import numpy as np
import re2

from arena_core import hookimpl
from arena_core.engine.batch import Batch, CheckColumn
from arena_core.io.junit import read_junit
from arena_core.model.errors import ValidationError
from arena_core.model.records import CriterionResult, Submission, SuccessCriterion, Task
from arena_core.workspace.bounded import compile_sources
from arena_core.workspace.confined import Workspace

_NO_RESULTS = "the submission reports no test results (tests_passed and tests_total, or correctness)"
_UNREPORTED = CriterionResult("tests_pass", "not_checkable", 0.0, reason=_NO_RESULTS)


_NO_WORKSPACE = "needs the submission's workspace; the submission names none"
#: Replaced, in a command's arguments, by a fresh path outside the workspace for the JUnit report.
JUNIT_PLACEHOLDER = "{junit_xml}"
#: Replaced by the path of an empty ``pytest.ini`` outside the workspace: ``-c {empty_ini}`` keeps
#: the workspace's own pytest configuration out (pytest 9 refuses ``-c /dev/null``).
EMPTY_INI_PLACEHOLDER = "{empty_ini}"


T = TypeVar("T")


def _param(criterion: SuccessCriterion, task: Task, key: str, kind: type[T] | tuple[type[T], ...], expected: str) -> T:
    value = criterion.params.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        _bad(criterion, task, key, expected, value)
    return value


def _bad(criterion: SuccessCriterion, task: Task, key: str, expected: str, value: object) -> NoReturn:
    index = task.success_criteria.index(criterion)
    raise ValidationError(f"task {task.id!r}", f"success_criteria.{index}.{key}", expected, value)


def _command(criterion: SuccessCriterion, task: Task) -> list[str]:
    """The criterion's ``command``: a non-empty list of strings (commands never go through a shell)."""
    value = criterion.params.get("command")
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(a, str) and a for a in value):
        _bad(criterion, task, "command", 'a list of arguments, e.g. ["python", "-m", "pytest"] (no shell)', value)
    return list(value)


def _timeout(criterion: SuccessCriterion, task: Task) -> float | None:
    if "timeout" not in criterion.params:
        return None
    value = criterion.params["timeout"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        _bad(criterion, task, "timeout", "a number of seconds > 0", value)
    return float(value)


def _run_command(workspace: Workspace, criterion: SuccessCriterion, task: Task) -> CriterionResult:
    """Run the criterion's ``command`` in the workspace: passed on exit status 0, else failed with
    what happened (exit status and output, a timeout, or why it could not start)."""
    timeout = _timeout(criterion, task)
    result = workspace.run(_command(criterion, task), timeout=timeout)
    return CriterionResult.of(
        result.succeeded, "" if result.succeeded else result.describe(timeout or workspace.settings.timeout)
    )


@lru_cache(maxsize=4096)
def _failed_at(rate: float) -> CriterionResult:
    """The ``tests_pass`` verdict for a pass rate below 1, made once per rate: results are
    frozen, and runs of a task report the same few rates."""
    return CriterionResult("tests_pass", "failed", rate, reason=f"pass rate {rate:g}")


def _not_checkable(batch: Batch, reason: str) -> CheckColumn:
    """Every row not checkable (the batch path never carries workspaces)."""
    size = batch.size
    return CheckColumn(np.zeros(size), np.full(size, 2, dtype=np.int8), lambda row: reason, np.zeros(size, np.int8))


def _needs_workspace(criterion: SuccessCriterion) -> CriterionResult:
    return CriterionResult(criterion.type, "not_checkable", 0.0, criterion.weight, _NO_WORKSPACE)


class FileExists:
    """Passes when ``file_path`` exists in the workspace; without one, when it is among the
    submission's ``files_created`` (the spec's rule)."""

    type = "file_exists"
    parameters = ("file_path",)

    def validate(self, criterion: SuccessCriterion, task: Task) -> None:
        _param(criterion, task, "file_path", str, "the path of the file that must exist")

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> bool:
        path = _param(criterion, task, "file_path", str, "the path of the file that must exist")
        return path in submission.files_created

    def check_batch(self, batch: Batch, criterion: SuccessCriterion, task: Task) -> CheckColumn:
        path = _param(criterion, task, "file_path", str, "the path of the file that must exist")
        return CheckColumn.of(batch.has_file(path))

    def check_workspace(
        self, workspace: Workspace, submission: Submission, criterion: SuccessCriterion, task: Task
    ) -> CriterionResult:
        path = _param(criterion, task, "file_path", str, "the path of the file that must exist")
        found = workspace.is_file(path)
        return CriterionResult.of(found, "" if found else f"file {path!r} does not exist in the workspace")


class NoErrors:
    """Passes when the workflow reported success."""

    type = "no_errors"
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
    parameters = ("min_pass_rate",)

    def validate(self, criterion: SuccessCriterion, task: Task) -> None:
        if "min_pass_rate" in criterion.params:
            rate = _param(criterion, task, "min_pass_rate", (int, float), "a pass rate from 0 to 1")
            if not 0 <= rate <= 1:
                _bad(criterion, task, "min_pass_rate", "a pass rate from 0 to 1", rate)

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> CriterionResult:
        rate = submission.pass_rate
        if rate is None:
            return CriterionResult(self.type, "not_checkable", 0.0, reason=_NO_RESULTS)
        if "min_pass_rate" in criterion.params:
            threshold = _param(criterion, task, "min_pass_rate", (int, float), "a pass rate from 0 to 1")
            passed = rate >= threshold
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
    parameters = ("command", "timeout")

    def validate(self, criterion: SuccessCriterion, task: Task) -> None:
        if "command" in criterion.params:
            _command(criterion, task)
        _timeout(criterion, task)

    __test__ = False  # not a pytest test class, despite the name

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> CriterionResult | bool:
        rate = submission.pass_rate
        if rate is None:
            return _UNREPORTED
        if rate >= 1.0:
            return True
        return _failed_at(rate)

    def check_batch(self, batch: Batch, criterion: SuccessCriterion, task: Task) -> CheckColumn:
        rate = batch.pass_rate()
        unknown = np.isnan(rate)
        passed = rate >= 1.0
        credit = np.where(unknown, 0.0, np.where(passed, 1.0, rate))
        status = np.where(unknown, 2, passed.astype(np.int8))
        return CheckColumn(
            credit, status, lambda row: _NO_RESULTS if unknown[row] else f"pass rate {rate[row]:g}", reason_by=rate
        )

    def check_workspace(
        self, workspace: Workspace, submission: Submission, criterion: SuccessCriterion, task: Task
    ) -> CriterionResult | bool:
        if "command" not in criterion.params:
            return self.check(submission, criterion, task)
        argv, timeout = _command(criterion, task), _timeout(criterion, task)
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
        if not report.is_file():
            return CriterionResult.of(False, f"no JUnit report was written ({result.describe(limit)})")
        try:
            counts = read_junit(report)
        except ValueError as exc:
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


class FileContains:
    """Passes when the workspace file ``file_path`` matches the regular expression ``pattern``
    (searched anywhere, ``^``/``$`` per line), matched by RE2: linear in the file's size
    whatever the pattern, so no file can make a check take quadratic or exponential time.
    RE2's syntax is Python's without backreferences and lookaround, which a task's pattern is
    refused for when the task is loaded."""

    type = "file_contains"
    parameters = ("file_path", "pattern")

    def validate(self, criterion: SuccessCriterion, task: Task) -> None:
        self._pattern(criterion, task)
        _param(criterion, task, "file_path", str, "the path of the file to search")

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> CriterionResult:
        self._pattern(criterion, task)
        return _needs_workspace(criterion)

    def check_batch(self, batch: Batch, criterion: SuccessCriterion, task: Task) -> CheckColumn:
        self._pattern(criterion, task)
        return _not_checkable(batch, _NO_WORKSPACE)

    def check_workspace(
        self, workspace: Workspace, submission: Submission, criterion: SuccessCriterion, task: Task
    ) -> CriterionResult:
        pattern = self._pattern(criterion, task)
        source = _param(criterion, task, "pattern", str, "a regular expression")
        path = _param(criterion, task, "file_path", str, "the path of the file to search")
        found = pattern.search(workspace.read_text(path)) is not None
        return CriterionResult.of(found, "" if found else f"file {path!r} has no match for {source!r}")

    def _pattern(self, criterion: SuccessCriterion, task: Task) -> Any:
        source = _param(criterion, task, "pattern", str, "a regular expression")
        options = re2.Options()
        options.log_errors = False
        try:
            return re2.compile(f"(?m){source}", options)
        except re2.error as exc:
            reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
            reason = reason.replace("(?m)", "")  # the multi-line flag is ours, not the task's
            _bad(
                criterion,
                task,
                "pattern",
                f"a regular expression RE2 accepts, no backreferences or lookaround ({reason})",
                source,
            )


class CodeCompiles:
    """Passes when the workspace's code compiles: by default every Python file matching
    ``paths`` (default ``["**/*.py"]``) is byte-compiled in a child process bounded by
    ``command_timeout`` and ``command_memory_limit`` (compiling runs none of the code, but a
    hostile file can make the compiler take minutes and gigabytes); with ``command``, that
    command must exit with status 0."""

    type = "code_compiles"
    parameters = ("paths", "command", "timeout")

    def validate(self, criterion: SuccessCriterion, task: Task) -> None:
        if "command" in criterion.params:
            _command(criterion, task)
        self._patterns(criterion, task)
        _timeout(criterion, task)

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> CriterionResult:
        return _needs_workspace(criterion)

    def check_batch(self, batch: Batch, criterion: SuccessCriterion, task: Task) -> CheckColumn:
        return _not_checkable(batch, _NO_WORKSPACE)

    def check_workspace(
        self, workspace: Workspace, submission: Submission, criterion: SuccessCriterion, task: Task
    ) -> CriterionResult:
        if "command" in criterion.params:
            return _run_command(workspace, criterion, task)
        patterns = self._patterns(criterion, task)
        files = [f for pattern in patterns for f in workspace.files(pattern)]
        if not files:
            return CriterionResult("", "not_checkable", 0.0, reason=f"no file matches {patterns}")
        sources = [(relative, workspace.read_text(relative)) for relative in dict.fromkeys(files)]
        settings = workspace.settings
        failure = compile_sources(
            sources, timeout=_timeout(criterion, task) or settings.timeout, memory_limit=settings.memory_limit
        )
        return CriterionResult.of(failure is None, failure or "")

    def _patterns(self, criterion: SuccessCriterion, task: Task) -> Sequence[str]:
        value = criterion.params.get("paths", ["**/*.py"])
        if not isinstance(value, (list, tuple)) or not value or not all(isinstance(p, str) and p for p in value):
            _bad(criterion, task, "paths", 'a list of glob patterns, e.g. ["src/**/*.py"]', value)
        return list(value)


class CommandSucceeds:
    """Passes when the task's ``command`` exits with status 0 in the workspace (within
    ``timeout`` seconds, default the configured ``command_timeout``)."""

    type = "command_succeeds"
    parameters = ("command", "timeout")

    def validate(self, criterion: SuccessCriterion, task: Task) -> None:
        _command(criterion, task)
        _timeout(criterion, task)

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> CriterionResult:
        _command(criterion, task)
        return _needs_workspace(criterion)

    def check_batch(self, batch: Batch, criterion: SuccessCriterion, task: Task) -> CheckColumn:
        _command(criterion, task)
        return _not_checkable(batch, _NO_WORKSPACE)

    def check_workspace(
        self, workspace: Workspace, submission: Submission, criterion: SuccessCriterion, task: Task
    ) -> CriterionResult:
        return _run_command(workspace, criterion, task)


@hookimpl
def arena_register_criterion_checkers() -> list[object]:
    return [
        FileExists(),
        NoErrors(),
        HarnessVerdict(),
        MinFunctionality(),
        TestsPass(),
        FileContains(),
        CodeCompiles(),
        CommandSucceeds(),
    ]
