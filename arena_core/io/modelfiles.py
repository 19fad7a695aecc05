"""``--models FILE``: models' release dates and knowledge cutoffs in TOML, JSON or CSV, read as
every input file is (a FIFO or device refused without blocking, text that is not UTF-8 named by
its line, JSON through :func:`~arena_core.io.decoding.loads`), and checked by
:func:`~arena_core.model.releases.model_dates`."""

from __future__ import annotations

import csv
import io
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena_core.io.decoding import InputError, loads, read_text
from arena_core.model.errors import ValidationError
from arena_core.model.releases import ModelDates, model_dates

__all__ = ["read_models"]


def read_models(path: Path) -> dict[str, ModelDates]:
    """The models of a ``--models`` file: TOML (``[models."NAME"]`` tables, or ``["NAME"]`` tables
    at the top), JSON (an object of names to dates, or a list of objects with ``name``), or CSV
    (a header with ``name`` and either date)."""
    if path.suffix not in (".toml", ".json", ".csv"):
        raise InputError(f"{path}: a models file is .toml, .json or .csv")
    text = read_text(path)
    where = str(path)
    data: Any
    try:
        if path.suffix == ".json":
            data = loads(text, path)
        elif path.suffix == ".toml":
            parsed = tomllib.loads(text)
            data = parsed.get("models", parsed)
        else:
            data = list(csv.DictReader(io.StringIO(text)))
    except (tomllib.TOMLDecodeError, csv.Error) as exc:
        raise InputError(f"{path}: not valid {path.suffix[1:].upper()}: {exc}") from None
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
