"""The evidence a judge reads of a run: its diff, files of its workspace, its trajectory, its
final answer, each read through the same confined, size-bounded readers as every checker.

A criterion names what to show (``"evidence": ["diff", "files:src/**/*.py", "trajectory",
"final_answer"]``). The workspace gives the diff (a git workspace, against its ``workspace_ref``
history) and files; the run's ``meta`` gives its ``trajectory`` and ``final_answer`` where the
importer kept them (docs/judges.md says which do). What does not fit the judge's limit is cut,
with a line that says how much was left out: never silently.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from attrs import frozen

from arena_core.model.records import Submission
from arena_core.workspace.confined import Workspace, WorkspaceError

__all__ = ["KINDS", "Evidence", "gather", "invalid_kind"]

#: What a criterion may show a judge; ``files:GLOB`` names workspace files by a glob.
KINDS = ("diff", "trajectory", "final_answer", "files:GLOB")


@frozen
class Evidence:
    """What a judge is shown: ``text``, ``shown`` of the ``total`` characters gathered."""

    text: str
    shown: int
    total: int

    @property
    def cut(self) -> bool:
        return self.shown < self.total


def invalid_kind(kind: object) -> bool:
    return not isinstance(kind, str) or not (kind in KINDS[:3] or (kind.startswith("files:") and len(kind) > 6))


def gather(kinds: Sequence[str], submission: Submission, workspace: Workspace | None, limit: int) -> Evidence:
    """The sections of ``kinds`` in order, within ``limit`` characters in all: a section that
    would pass it is cut there, and a last line says how much was left out."""
    parts: list[str] = []
    used = total = 0
    for kind in kinds:
        for title, body, size in _sections(kind, submission, workspace, max(0, limit - used) + 1):
            section = f"### {title}\n{body}\n"
            total += len(section) - len(body) + size
            room = limit - used
            if room <= 0:
                continue
            if len(section) > room:
                section = section[:room]
            parts.append(section)
            used += len(section)
    text = "".join(parts)
    if total > used:
        text += f"\n[evidence cut here: {total - used:,} of its {total:,} characters are not shown (the limit is {limit:,})]\n"
    return Evidence(text, used, total)


def _sections(
    kind: str, submission: Submission, workspace: Workspace | None, budget: int
) -> list[tuple[str, str, int]]:
    """(title, text, its full length) of one kind of evidence; reads at most ``budget`` of any file."""
    if kind == "final_answer":
        return [("final answer", *_text(submission.meta.get("final_answer"), budget, "the run's final answer"))]
    if kind == "trajectory":
        return [("trajectory", *_text(submission.meta.get("trajectory"), budget, "the run's trajectory"))]
    if workspace is None:
        return [(kind, "(not available: the run has no workspace to read it from)", 0)]
    if kind == "diff":
        try:
            diff = workspace.diff(limit=max(budget, 1) * 4)
        except WorkspaceError as exc:
            return [("diff", f"(not available: {exc})", 0)]
        return [("diff", diff[:budget] or "(no changes)", len(diff) or 12)]
    pattern = kind.removeprefix("files:")
    found = []
    for relative in workspace.files(pattern):
        try:
            text, size = workspace.read_head(relative, max(budget, 1))
        except WorkspaceError as exc:
            text, size = f"(not read: {exc})", 0
        found.append((f"file {relative}", text, max(size, len(text))))
        budget = max(0, budget - len(text))
    return found or [(kind, f"(no file matches {pattern!r})", 0)]


def _text(value: Any, budget: int, what: str) -> tuple[str, int]:
    if value is None:
        return f"(not available: the importer kept no {what})", 0
    text = value if isinstance(value, str) else _messages(value)
    return text[:budget], len(text)


def _messages(value: Any) -> str:
    """A trajectory kept as a list of messages, one ``role: content`` paragraph each."""
    if isinstance(value, list) and all(isinstance(m, dict) for m in value):
        return "\n\n".join(f"{m.get('role', '?')}: {m.get('content', '')}" for m in value)
    return json.dumps(value, ensure_ascii=False, default=str)
