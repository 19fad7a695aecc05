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

from arena_core import hookimpl
from arena_plugins.checkers.reported import FileExists, HarnessVerdict, MinFunctionality, NoErrors, TestsPass
from arena_plugins.checkers.workspace import CodeCompiles, CommandSucceeds, FileContains


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
