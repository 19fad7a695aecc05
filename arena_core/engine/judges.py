"""The judges a configuration names (``[judges.NAME]`` tables), built once by their providers,
and the prices their requests are counted at."""

from __future__ import annotations

from arena_core.config.settings import ScoringConfig
from arena_core.model.errors import UnknownComponentError, ValidationError
from arena_core.model.judging import Judge
from arena_core.pricing.pricer import Pricer
from arena_core.pricing.tables import PriceTable
from arena_core.registry.components import Components

__all__ = ["build_judges", "judge_pricer"]


def build_judges(components: Components, config: ScoringConfig) -> dict[str, Judge]:
    """Each configured judge, built by the provider its table names.

    :raises UnknownComponentError: a table names a provider nobody registered (``judges.NAME.provider``).
    :raises ValidationError: a provider refuses a setting (``judges.NAME.KEY``).
    """
    built: dict[str, Judge] = {}
    for name, table in config.judges.items():
        try:
            provider = components.judge_providers[table["provider"]]
        except UnknownComponentError as exc:
            raise UnknownComponentError(f"judges.{name}.provider: {exc}") from None
        judge = provider.build(name, {k: v for k, v in table.items() if k != "provider"})
        if not isinstance(judge, Judge):
            raise ValidationError("configuration", f"judges.{name}", "a judge built by its provider", judge)
        built[name] = judge
    return built


def judge_pricer(components: Components, config: ScoringConfig) -> Pricer | None:
    """What prices a judge's requests: the price tables, then the price source, whatever
    ``cost_source`` says of the runs (a judge's cost is never a run's); ``None`` when there is
    nothing to price with (the ``prices`` extra is not installed and no table is given)."""
    if not config.judges:
        return None
    source = components.price_sources.get(config.price_source) if config.price_source else None
    tables = [PriceTable(path) for path in config.price_tables]
    return Pricer(config, tables, source) if source is not None or tables else None
