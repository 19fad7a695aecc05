"""When a model was released and what it was trained up to: the dates a window per model needs.

Problems published before a model's knowledge cutoff may be in its training data (LiveCodeBench,
SWE-bench-Live and SWE-rebench score each model only on problems published after it). The dates
come from ``[models."NAME"]`` tables of the configuration or a ``--models`` file (TOML, JSON or
CSV: :mod:`arena_core.io.modelfiles`), by the name runs are grouped under (after
``[model_aliases]``). A date is never guessed: a model without the date a window needs is left
out of that window, and named.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from attrs import frozen

from arena_core.model.checks import TIMESTAMP_EXPECTED, moment
from arena_core.model.errors import ValidationError

__all__ = ["DATE_FIELDS", "WINDOWS", "ModelDates", "after", "model_dates"]

#: The dates a model may have.
DATE_FIELDS = ("release_date", "knowledge_cutoff")
#: ``--window`` names and the date each reads.
WINDOWS = {"after-cutoff": "knowledge_cutoff", "after-release": "release_date"}


@frozen
class ModelDates:
    """A model's dates, ISO-8601 dates or times (a time without a zone is UTC)."""

    release_date: str | None = None
    knowledge_cutoff: str | None = None

    def date(self, window: str) -> str | None:
        """The date the window ``window`` (a :data:`WINDOWS` name) starts after."""
        found: str | None = getattr(self, WINDOWS[window])
        return found


def model_dates(value: Mapping[str, Any] | None, where: str = "configuration") -> dict[str, ModelDates]:
    """``{NAME: {release_date, knowledge_cutoff}}`` checked: each date a date, no other key; an
    error names the model and the field (``models.NAME.release_date``)."""
    found: dict[str, ModelDates] = {}
    for name, dates in (value or {}).items():
        if isinstance(dates, ModelDates):
            dates = {key: getattr(dates, key) for key in DATE_FIELDS}
        if not isinstance(dates, Mapping):
            raise ValidationError(where, f"models.{name}", "a table of release_date and knowledge_cutoff", dates)
        dates = {k: v.isoformat() if isinstance(v, datetime.date) else v for k, v in dates.items()}  # TOML dates
        for key, text in dates.items():
            if key not in DATE_FIELDS:
                raise ValidationError(where, f"models.{name}.{key}", f"one of {', '.join(DATE_FIELDS)}", key)
            if text not in (None, "") and (not isinstance(text, str) or moment(text) is None):
                raise ValidationError(where, f"models.{name}.{key}", TIMESTAMP_EXPECTED, text)
        found[str(name)] = ModelDates(*(dates.get(key) or None for key in DATE_FIELDS))
    return found


def after(created_at: str, date: str) -> bool:
    """Whether a task created at ``created_at`` is after ``date``: after its whole day when it
    is a date alone (a task of the cutoff day itself may be in the training data)."""
    created, start = moment(created_at), moment(date)
    if created is None or start is None:
        return False
    if len(date.strip()) == 10:
        start += datetime.timedelta(days=1)
        return created >= start
    return created > start
