"""A criterion checker for arena-core: every source file carries an SPDX license header.

A task uses it as::

    {"type": "license_header", "license": "MIT", "paths": ["src/**/*.py"]}

With a workspace, each file matching ``paths`` must contain ``SPDX-License-Identifier: MIT``
in its first lines (five unless the operator's configuration says otherwise); credit is the
share of files that do. Without a workspace there is nothing to look at, so the criterion is
"not checkable" (it earns nothing, and says why).

The operator can set how far down the header may be, in ``arena.toml``::

    [plugins.license]
    header_lines = 10
"""

from __future__ import annotations

import attrs

from arena_core import CriterionResult, ValidationError, hookimpl

__version__ = "0.1.0"


def _positive(instance, attribute, value):
    if value < 1:
        raise ValidationError("configuration", attribute.name, "a whole number >= 1", value)


@attrs.frozen
class Options:
    """The ``[plugins.license]`` table."""

    header_lines: int = attrs.field(default=5, validator=_positive)
    """How many lines from the top of a file the SPDX header may be."""


class LicenseHeader:
    type = "license_header"

    def __init__(self, header_lines=5):
        self.header_lines = header_lines

    def check(self, submission, criterion, task):
        """Without a workspace: the submission's claims say nothing about file contents."""
        self._license(criterion, task)
        return CriterionResult("", "not_checkable", 0.0, reason="needs the submission's workspace")

    def check_workspace(self, workspace, submission, criterion, task):
        """With a workspace: read the files through it, so paths stay inside the workspace."""
        license_id = self._license(criterion, task)
        header = f"SPDX-License-Identifier: {license_id}"
        files = [f for pattern in criterion.params.get("paths", ["**/*.py"]) for f in workspace.files(pattern)]
        if not files:
            return CriterionResult("", "not_checkable", 0.0, reason="no source file to check")
        missing = [f for f in files if header not in "\n".join(workspace.read_text(f).splitlines()[: self.header_lines])]
        if not missing:
            return True
        credit = 1 - len(missing) / len(files)
        return CriterionResult("", "failed", credit, reason=f"no {license_id} header in {', '.join(missing)}")

    def _license(self, criterion, task):
        value = criterion.params.get("license")
        if not isinstance(value, str) or not value:
            index = task.success_criteria.index(criterion)
            raise ValidationError(f"task {task.id!r}", f"success_criteria.{index}.license",
                                  "an SPDX license identifier, e.g. \"MIT\"", value)
        return value


@hookimpl
def arena_plugin_options():
    return Options


@hookimpl
def arena_register_criterion_checkers(options):
    return [LicenseHeader(options.header_lines)]
