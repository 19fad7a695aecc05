"""The exceptions arena-core raises.

Every error a user can cause derives from :class:`ArenaError`, so a host application
catches one type. Input problems are :class:`ValidationError`: the message always names
the record, the field and what was expected, because a score computed from a silently
repaired record is worse than no score.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import reprlib
from collections.abc import Iterable
from typing import Any

__all__ = [
    "ArenaError",
    "ValidationError",
    "PluginError",
    "PluginLoadError",
    "DuplicateComponentError",
    "UnknownComponentError",
    "closest",
    "shorten",
]


class ArenaError(Exception):
    """Base class of every error arena-core raises on purpose."""


class ValidationError(ArenaError, ValueError):
    """A record (submission, task, baseline, evaluation, configuration) is not valid.

    :param record: what the record is, e.g. ``submission 'abc-1'`` (``submission (no id)`` for
        one without its own id).
    :param field: the offending field, dotted for nested ones (``success_criteria.0.type``).
    :param expected: what a valid value looks like.
    :param got: the value found; omitted when the field is missing.
    :param code: a stable name for the kind of problem, for programs (an HTTP error body, a
        retry decision): ``missing_field`` and ``invalid_value`` by default, ``duplicate_id`` and
        ``missing_telemetry`` where those are what happened.
    """

    _MISSING = object()

    def __init__(self, record: str, field: str, expected: str, got: Any = _MISSING, *, code: str | None = None) -> None:
        self.record = record
        self.field = field
        self.expected = expected
        #: Whether the field is missing (then ``got`` is ``None``).
        self.missing = got is self._MISSING
        self.got = None if self.missing else got
        self.code = code or ("missing_field" if self.missing else "invalid_value")
        found = "" if self.missing else f", got {bounded_repr(got)}"
        super().__init__(f"{shorten(record)}: {field}: expected {expected}{found}")

    def within(self, record: str, prefix: str = "") -> ValidationError:
        """The same error seen from an enclosing record (used for nested fields)."""
        field = f"{prefix}.{self.field}" if prefix else self.field
        return ValidationError(
            record, field, self.expected, self._MISSING if self.missing else self.got, code=self.code
        )

    def at_position(self, index: int) -> ValidationError:
        """The same error, naming a record that has no id of its own by its position in the
        list it came in (``submission at position 3 (no id)``); other errors are returned as is."""
        if not self.record.endswith("(no id)"):
            return self
        kind = self.record.removesuffix("(no id)").strip()
        return ValidationError(
            f"{kind} at position {index} (no id)",
            self.field,
            self.expected,
            self._MISSING if self.missing else self.got,
            code=self.code,
        )

    def as_dict(self) -> dict[str, Any]:
        """The error as JSON-ready data (``got`` as its ``repr`` when it is not JSON), e.g. for an
        HTTP 400 body."""
        got: Any = bounded_repr(self.got)
        if (
            self.got is None
            or isinstance(self.got, (bool, int, float))
            or (isinstance(self.got, str) and len(self.got) <= SHOWN_LENGTH)
        ):
            with contextlib.suppress(ValueError):  # NaN, an integer too long for JSON: its repr
                got = json.loads(json.dumps(self.got, allow_nan=False))
        return {
            "code": self.code,
            "record": self.record,
            "field": self.field,
            "expected": self.expected,
            "got": got,
            "missing": self.missing,
            "message": str(self),
        }


class PluginError(ArenaError):
    """A plugin could not be loaded or its components do not fit together."""


class PluginLoadError(PluginError):
    """An entry-point plugin failed to import or to register."""


class DuplicateComponentError(PluginError):
    """Two plugins registered a component under the same name."""


class UnknownComponentError(ArenaError, LookupError):
    """A configuration or a record asked for a component nobody registered."""


#: The longest value an error message shows whole.
SHOWN_LENGTH = 120


#: How much of a value an error's repr walks: a few levels, items and characters, so a value that
#: expands to gigabytes (a YAML alias bomb, a million-item list) is never turned into text whole.
_REPR = reprlib.Repr()  # its limits set one by one: Python 3.11's takes no arguments
_REPR.maxlevel = 3
_REPR.maxtuple = _REPR.maxlist = _REPR.maxarray = _REPR.maxdict = _REPR.maxset = _REPR.maxfrozenset = 6
_REPR.maxdeque = 6
_REPR.maxstring = _REPR.maxother = SHOWN_LENGTH
_REPR.maxlong = 60


def bounded_repr(value: Any) -> str:
    """``repr(value)`` as an error shows it: its first items and characters only (then ``...``),
    the length of a long string said."""
    if isinstance(value, str) and len(value) > SHOWN_LENGTH:
        return shorten(repr(value[: SHOWN_LENGTH + 10]))[: SHOWN_LENGTH - 20] + f"... ({len(value):,} characters)"
    return shorten(_REPR.repr(value))


def shorten(text: str, limit: int = SHOWN_LENGTH) -> str:
    """``text`` cut to ``limit`` characters with its full length said, so one huge value (a
    200,000-character id) cannot flood a terminal or a log line."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 20]}... ({len(text):,} characters)"


def closest(name: str, choices: Iterable[str]) -> str:
    """A ``"; did you mean 'x'?"`` suffix for a likely typo of ``name``, or ``""``."""
    match = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""
