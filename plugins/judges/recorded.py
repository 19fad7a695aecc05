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

import orjson

from arena_core.io.decoding import InputError, bounded_lines, line_too_long, open_binary
from arena_core.model.errors import ValidationError
from arena_core.model.judging import JudgeReply, JudgeRequest

__all__ = ["RecordedJudge", "RecordedJudges", "read_verdicts"]


def read_verdicts(path: Path, judge: str | None = None) -> dict[tuple[str, str], tuple[bool | None, str]]:
    """``(submission_id, requirement)`` to ``(verdict, reason)`` of a file of recorded verdicts
    (the last line wins where one is given twice).

    :raises InputError: naming ``FILE:LINE`` and the field of a line that is not a verdict.
    """
    found: dict[tuple[str, str], tuple[bool | None, str]] = {}
    with open_binary(path) as handle:
        for number, raw in bounded_lines(handle):
            where = f"{path}:{number}"
            if raw is None:
                raise line_too_long(where)
            if not raw.strip():
                continue
            try:
                line = orjson.loads(raw)
            except orjson.JSONDecodeError:
                raise InputError(f"{where}: not JSON") from None
            if not isinstance(line, dict):
                raise InputError(f"{where}: expected a verdict (a JSON object)")
            for key in ("submission_id", "requirement"):
                if not isinstance(line.get(key), (str, int)) or isinstance(line.get(key), bool):
                    raise InputError(f"{where}: {key}: expected a name, got {line.get(key)!r}")
            verdict = line.get("verdict")
            if verdict is not None and not isinstance(verdict, bool):
                raise InputError(f"{where}: verdict: expected true, false or null, got {verdict!r}")
            if judge is not None and line.get("judge") != judge:
                continue
            found[(str(line["submission_id"]), str(line["requirement"]))] = (verdict, str(line.get("reason") or ""))
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
            name, path, settings.get("judge"), settings.get("model"), read_verdicts(path, settings.get("judge"))
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
