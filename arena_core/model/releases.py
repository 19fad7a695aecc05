"""When a model was released and what it was trained up to: the dates a window per model needs.

Problems published before a model's knowledge cutoff may be in its training data (LiveCodeBench,
SWE-bench-Live and SWE-rebench score each model only on problems published after it). The dates
come from ``[models."NAME"]`` tables of the configuration or a ``--models`` file (TOML, JSON or
CSV), by the name runs are grouped under (after ``[model_aliases]``). A date is never guessed:
a model without the date a window needs is left out of that window, and named.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from arena_core.model.checks import TIMESTAMP_EXPECTED, moment
from arena_core.model.errors import ArenaError, ValidationError

__all__ = ["DATE_FIELDS", "WINDOWS", "ModelDates", "after", "model_dates", "read_models"]

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


def read_models(path: Path) -> dict[str, ModelDates]:
    """The models of a ``--models`` file: TOML (``[models."NAME"]`` tables, or ``["NAME"]`` tables
    at the top), JSON (an object of names to dates, or a list of objects with ``name``), or CSV
    (a header with ``name`` and either date)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ArenaError(f"{path}: cannot read the models file ({exc.__class__.__name__})") from None
    where = str(path)
    try:
        if path.suffix == ".toml":
            data: Any = tomllib.loads(text)
            data = data.get("models", data)
        elif path.suffix == ".json":
            data = json.loads(text)
        elif path.suffix == ".csv":
            data = list(csv.DictReader(io.StringIO(text)))
        else:
            raise ArenaError(f"{path}: a models file is .toml, .json or .csv")
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, csv.Error) as exc:
        raise ArenaError(f"{path}: not valid {path.suffix[1:].upper()}: {exc}") from None
    if isinstance(data, list):
        rows: dict[str, Any] = {}
        for number, row in enumerate(data, start=1):
            if not isinstance(row, Mapping) or not row.get("name"):
                raise ValidationError(f"{where} model {number}", "name", "the model's name", row)
            rows[str(row["name"])] = {k: v for k, v in row.items() if k != "name" and v not in (None, "")}
        data = rows
    if not isinstance(data, Mapping):
        raise ValidationError(where, "models", "a table of model names to their dates", data)
    return model_dates(data, where)


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
