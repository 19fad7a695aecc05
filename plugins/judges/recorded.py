"""``recorded``: verdicts read from a JSON Lines file, so that judgments made elsewhere (by
people, by Harbor, Inspect or Agent-as-a-Judge, by ``arena judge`` earlier) are scored like any
judge's.

One line a verdict::

    {"submission_id": "run-7", "requirement": "r1", "verdict": true, "reason": "...", "judge": "sonnet"}

``verdict`` is ``true``, ``false`` or ``null`` (no verdict: the requirement stays unscored).
Settings (``[judges.NAME]``, ``provider = "recorded"``): ``path`` (required), ``judge`` (only
the lines of this ``judge``, when a file holds several), ``model`` (the model that made them,
for the self-judging rule). A line that is not a verdict is an error naming the file and line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena_core.io.judgements import read_verdicts
from arena_core.model.errors import ValidationError
from arena_core.model.judging import JudgeReply, JudgeRequest

__all__ = ["RecordedJudge", "RecordedJudges", "recorded_verdicts"]


def recorded_verdicts(path: Path, judge: str | None = None) -> dict[tuple[str, str], tuple[bool | None, str]]:
    """``(submission_id, requirement)`` to ``(verdict, reason)`` of a file of recorded verdicts
    (the last line wins where one is given twice); those of ``judge`` only, when given.

    :raises InputError: naming ``FILE:LINE`` and the field of a line that is not a verdict, or
        that judges a whole run (a judge criterion's verdicts are its requirements').
    """
    found: dict[tuple[str, str], tuple[bool | None, str]] = {}
    for line in read_verdicts(path, whole_runs=False):
        if judge is None or line.judge == judge:
            found[(line.submission_id, str(line.requirement))] = (line.verdict, line.reason)
    return found


class RecordedJudges:
    """Builds ``recorded`` judges (see the module's note)."""

    name = "recorded"

    def build(self, name: str, settings: Mapping[str, Any]) -> RecordedJudge:
        for key, value in settings.items():
            if key not in ("path", "judge", "model"):
                raise ValidationError(
                    "configuration",
                    f"judges.{name}.{key}",
                    "a setting of the recorded provider (path, judge, model)",
                    key,
                )
            if not isinstance(value, str) or not value:
                raise ValidationError("configuration", f"judges.{name}.{key}", "a non-empty text", value)
        if "path" not in settings:
            raise ValidationError("configuration", f"judges.{name}.path", "the JSON Lines file of recorded verdicts")
        path = Path(settings["path"])
        return RecordedJudge(
            name, path, settings.get("judge"), settings.get("model"), recorded_verdicts(path, settings.get("judge"))
        )


class RecordedJudge:
    """Answers from a file of verdicts, read when the judge is built (a bad line is then refused
    before anything is scored)."""

    provider = "recorded"
    cacheable = False  # the file is its own record: nothing to save by caching it

    def __init__(
        self,
        name: str,
        path: Path,
        judge: str | None,
        model: str | None,
        verdicts: dict[tuple[str, str], tuple[bool | None, str]],
    ) -> None:
        self.name, self.path, self.judge, self.model = name, path, judge, model
        self._verdicts = verdicts
        self._digest = hashlib.sha256(path.read_bytes()).hexdigest()

    @property
    def identity(self) -> Mapping[str, Any]:
        return {"provider": self.provider, "path": str(self.path), "sha256": self._digest, "judge": self.judge}

    def ask(self, request: JudgeRequest) -> JudgeReply:
        found = self._verdicts.get((request.submission_id, request.requirement.id))
        if found is None:
            return JudgeReply(None, error=f"no verdict recorded in {self.path.name} for this run and requirement")
        verdict, reason = found
        if verdict is None:
            return JudgeReply(None, reason, error=f"recorded as no verdict{': ' + reason if reason else ''}")
        return JudgeReply(verdict, reason)
