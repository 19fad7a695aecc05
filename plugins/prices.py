"""The default price source: genai-prices, Pydantic's maintained table of model prices.

genai-prices keeps, for about 2,300 models of 47 providers, dated prices (230 models have a
price change on record), long-prompt tiers (119 models) and cache read and write rates, and
matches the many spellings a model goes by (``claude-3-5-sonnet-20241022``, ``gpt-4o``...). Its
bundled snapshot is used, never a download, so a package version is one table: the version is
what every priced evaluation records. The ``prices`` extra installs it.
"""

from __future__ import annotations

import datetime
import functools
import importlib.metadata
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from arena_core import hookimpl
from arena_core.model.errors import ArenaError
from arena_core.model.prices import Rate, Rates

#: genai-prices' name of each price we read, by our kind of token. Its other prices (per
#: request, web search, audio, 1-hour cache writes) are for usage submissions do not record.
_KEYS = {
    "input": "input_mtok",
    "output": "output_mtok",
    "cache_read": "cache_read_mtok",
    "cache_write": "cache_write_mtok",
}


def _rate(value: Any) -> Rate | None:
    if value is None:
        return None
    if isinstance(value, Decimal):
        return Rate(value)
    return Rate(value.base, [(tier.start, tier.price) for tier in value.tiers])


class GenaiPrices:
    """Prices from the installed genai-prices package's bundled table."""

    name = "genai-prices"
    description = "genai-prices' bundled table: dated, tiered, cache-aware prices of ~2,300 models"

    def __init__(self) -> None:
        self._snapshot: Any = None
        self._found: dict[tuple[str, str | None], tuple[Any, Any] | None] = {}
        """The table's provider and model by (model, provider) asked: its search by name is
        most of pricing a run, and a store asks for the same few models a million times."""

    def _table(self) -> Any:
        if self._snapshot is None:
            try:
                import genai_prices.data_snapshot
            except ImportError:
                raise ArenaError(
                    "the price source 'genai-prices' needs the genai-prices package: "
                    "pip install 'arena-core[prices]' (or give price_tables and price_source = \"\")"
                ) from None
            self._snapshot = genai_prices.data_snapshot.get_snapshot()
        return self._snapshot

    @functools.cached_property
    def version(self) -> str:
        """The installed package's version, read from its metadata once (every priced run records
        it: read per run, it was most of ``arena reprice``'s time)."""
        try:
            return f"genai-prices {importlib.metadata.version('genai-prices')}"
        except importlib.metadata.PackageNotFoundError:
            return "genai-prices (not installed)"

    def rates(self, model: str, provider: str | None, at: datetime.datetime) -> Rates | None:
        asked = (model, provider)
        if asked not in self._found:
            self._found[asked] = self._find(model, provider)
        found = self._found[asked]
        if found is None:
            return None
        found_provider, info = found
        prices = info.get_prices(at)
        rate = {kind: _rate(getattr(prices, key)) for kind, key in _KEYS.items()}
        if rate["input"] is None or rate["output"] is None:
            return None  # not priced by the token (images, audio, per request)
        return Rates(
            info.id, rate["input"], rate["output"], rate["cache_read"], rate["cache_write"], provider=found_provider.id
        )

    def _find(self, model: str, provider: str | None) -> tuple[Any, Any] | None:
        # ``provider/model`` (Inspect's names, LiteLLM's): the model at that provider.
        tries = [
            (model, provider),
            *([(model.split("/", 1)[1], provider or model.split("/", 1)[0])] if "/" in model else []),
        ]
        for name, at_provider in tries:
            try:
                found: tuple[Any, Any] = self._table().find_provider_model(name, None, at_provider, None)
                return found
            except LookupError:
                continue
        return None

    def known_models(self) -> Iterable[str]:
        return [model.id for provider in self._table().providers for model in provider.models]


@hookimpl
def arena_register_price_sources() -> list[object]:
    return [GenaiPrices()]
