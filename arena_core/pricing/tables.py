"""Your own prices: a file of model name to dollars per million tokens (``price_tables``).

The file is TOML, JSON or YAML, and its shape is the one Inspect AI's ``--model-cost-config``
reads, so an Inspect model-cost file works unchanged::

    [gpt-4o-mini]
    input = 0.15
    output = 0.60
    input_cache_read = 0.075
    input_cache_write = 0.15

Beyond it, a model may list bands for long prompts (``tiers = [{above = 200000, input = 2.5,
output = 15}]``: the whole call at the band its prompt passes) and may be a list of such
tables, each but the first with the date its prices took effect (``from = 2025-06-01``). A cache
price left out bills those tokens as input.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import tomllib
from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from arena_core.model.errors import ArenaError, ValidationError
from arena_core.model.prices import Rate, Rates
from arena_core.model.yamlsafe import load_yaml

__all__ = ["PriceTable"]

_KINDS = {"input": "input", "output": "output", "input_cache_read": "cache_read", "input_cache_write": "cache_write"}
_KEYS = frozenset((*_KINDS, "tiers", "from", "provider"))
_PRICE = "a price in dollars per million tokens (a number >= 0)"


def _price(value: Any, where: str, field: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e9:
        raise ValidationError(where, field, _PRICE, value)
    return Decimal(str(value))


def _date(value: Any, where: str, field: str) -> datetime.date:
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    try:
        return datetime.date.fromisoformat(str(value))
    except ValueError:
        raise ValidationError(where, field, "a date, such as 2025-06-01", value) from None


def _rates(name: str, entry: Any, where: str, field: str) -> Rates:
    if not isinstance(entry, Mapping):
        raise ValidationError(where, field, "a table of prices (input, output, input_cache_read, ...)", entry)
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise ValidationError(where, f"{field}.{unknown[0]}", f"one of {', '.join(sorted(_KEYS))}", unknown[0])
    for required in ("input", "output"):
        if required not in entry:
            raise ValidationError(where, f"{field}.{required}", _PRICE)
    tiers = entry.get("tiers", [])
    if not isinstance(tiers, list):
        raise ValidationError(where, f"{field}.tiers", "a list of tables with 'above' and prices", tiers)
    bands: dict[str, list[tuple[int, Decimal]]] = {kind: [] for kind in _KINDS}
    for i, tier in enumerate(tiers):
        at = f"{field}.tiers.{i}"
        above = tier.get("above") if isinstance(tier, Mapping) else None
        if isinstance(above, bool) or not isinstance(above, int) or above < 0:
            raise ValidationError(where, f"{at}.above", "the prompt size (tokens) above which the tier applies", above)
        for kind in set(tier) - {"above"}:
            if kind not in _KINDS:
                raise ValidationError(where, f"{at}.{kind}", f"one of above, {', '.join(_KINDS)}", kind)
            bands[kind].append((above, _price(tier[kind], where, f"{at}.{kind}")))
    rate = {
        kind: Rate(_price(entry[kind], where, f"{field}.{kind}"), bands[kind]) if kind in entry else None
        for kind in _KINDS
    }
    provider = entry.get("provider")
    since = _date(entry["from"], where, f"{field}.from") if "from" in entry else None
    return Rates(
        name, rate["input"], rate["output"], rate["input_cache_read"], rate["input_cache_write"],  # type: ignore[arg-type]
        provider=provider if isinstance(provider, str) else None, since=since,
    )  # fmt: skip


def _load(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ArenaError(f"price table {path}: cannot be read ({exc.strerror or exc})") from None
    try:
        if path.suffix == ".toml":
            return tomllib.loads(raw.decode()), raw
        if path.suffix == ".json":
            return json.loads(raw), raw
        if path.suffix in (".yml", ".yaml"):
            return load_yaml(raw), raw
    except (ValueError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ArenaError(f"price table {path}: not valid {path.suffix[1:].upper()}: {exc}") from None
    raise ArenaError(f"price table {path}: expected a .toml, .json, .yml or .yaml file")


class PriceTable:
    """A price source read from one file (see the module's note)."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        data, raw = _load(path)
        where = f"price table {path}"
        if not isinstance(data, Mapping) or not data:
            raise ValidationError(where, "models", "a table of model name to its prices", data)
        self.name = str(path)
        self.version = f"{path.name} sha256:{hashlib.sha256(raw).hexdigest()[:12]}"
        self._models: dict[str, list[Rates]] = {}
        for model, entry in data.items():
            entries = entry if isinstance(entry, list) else [entry]
            dated = [_rates(str(model), e, where, f"{model}.{i}" if len(entries) > 1 else str(model))
                     for i, e in enumerate(entries)]  # fmt: skip
            if any(r.since is None for r in dated[1:]):
                raise ValidationError(where, str(model), "every price list entry after the first to have a 'from' date")
            key = str(model).lower()
            if key in self._models:
                raise ValidationError(
                    where,
                    str(model),
                    f"a model name used once, ignoring case (models are looked up ignoring case, and "
                    f"{self._models[key][0].model!r} is in the table already): keep one of them",
                )
            self._models[key] = sorted(dated, key=lambda r: r.since or datetime.date.min)

    def rates(self, model: str, provider: str | None, at: datetime.datetime) -> Rates | None:
        """The model's prices in force at ``at`` (``None`` when it is unknown, or when every entry
        took effect later)."""
        entries = self._models.get(model.lower(), [])
        valid = [r for r in entries if r.since is None or r.since <= at.date()]
        return valid[-1] if valid else None

    def known_models(self) -> Iterable[str]:
        return [entries[0].model for entries in self._models.values()]
