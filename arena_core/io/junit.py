"""Reading a JUnit XML report (pytest's ``--junitxml``, Maven Surefire, Jest's reporter...).

Only counts are read: every ``<testcase>`` is a test; one with a ``<failure>`` or ``<error>``
child failed; one with ``<skipped>`` is left out of the total. The report comes from a run of
untrusted code, so it is size-capped and parsed with the standard library's parser, which
neither fetches external entities nor expands entity bombs (Expat >= 2.4.1).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from attrs import frozen

__all__ = ["JUnitCounts", "read_junit"]

#: Reports larger than this are refused rather than parsed.
MAX_REPORT_BYTES = 50_000_000


@frozen
class JUnitCounts:
    passed: int
    failed: int
    skipped: int

    @property
    def total(self) -> int:
        """Tests that ran (skipped ones excluded)."""
        return self.passed + self.failed


def read_junit(path: Path) -> JUnitCounts:
    """Count the test cases of the report at ``path``.

    :raises ValueError: the report is too large or is not JUnit XML; the message says which.
    """
    size = path.stat().st_size
    if size > MAX_REPORT_BYTES:
        raise ValueError(f"JUnit report is {size:,} bytes, over the {MAX_REPORT_BYTES:,}-byte limit")
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise ValueError(f"JUnit report is not valid XML ({exc})") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"JUnit report has root <{root.tag}>, expected <testsuites> or <testsuite>")
    passed = failed = skipped = 0
    for case in root.iter("testcase"):
        children = {child.tag for child in case}
        if children & {"failure", "error"}:
            failed += 1
        elif "skipped" in children:
            skipped += 1
        else:
            passed += 1
    return JUnitCounts(passed, failed, skipped)
