"""Runs' costs from their usage: ``cost_source = "priced"`` and ``"priced_when_missing"``.

A harness's own cost field means something different in every harness (a 0 for "not
recorded", cache reads at the fresh-input price, flat rates for long prompts, prices of the
day it ran); a cost priced from the run's usage with one table is the same arithmetic for
every run. The :class:`Pricer` replaces (or fills in) ``estimated_cost`` and writes what it did
under the submission's ``meta.pricing``:

- ``source``: ``priced``, ``reported`` (kept as the harness wrote it) or ``unpriced`` (no
  usage or no model to price: the cost is missing, and the ``missing`` policy applies);
- ``reported``: the harness's figure (``None`` when it wrote none), ``priced``: the table's;
- ``model``, ``provider``: the table's names the run was priced as; ``date``; ``table``: the
  table's version; ``band_unknown``: see :mod:`arena_core.pricing.quote`.

Pricing a priced submission again (a stored one, under another table or date) starts from the
``reported`` figure it keeps, never from the cost an earlier pricing wrote.

Per-call usage, where an importer keeps it, is ``meta.usage_per_call``: a list of
``{input_tokens, output_tokens, cache_read_tokens, cache_write_tokens}``, one per model call,
each call then priced at the band of its own prompt.
"""

from __future__ import annotations

import datetime
import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from arena_core.config.settings import ScoringConfig
from arena_core.model.checks import describe, moment
from arena_core.model.errors import ValidationError
from arena_core.model.prices import PriceSource, Rates
from arena_core.model.records import Submission
from arena_core.pricing.quote import Call, Quote, price_calls
from arena_core.pricing.tables import PriceTable

__all__ = ["Pricer", "pricer_of", "pricing_algorithms", "structuring"]

_CALL_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
_NEAREST = 3


def _calls(submission: Submission) -> list[Call] | None:
    """The run's per-call usage from ``meta.usage_per_call``, checked against its totals."""
    given = submission.meta.get("usage_per_call")
    if given is None:
        return None
    where = describe(submission)
    if not isinstance(given, Sequence) or isinstance(given, (str, bytes)) or not given:
        raise ValidationError(where, "meta.usage_per_call", "a list of each model call's token counts", given)
    calls = []
    for i, call in enumerate(given):
        if not isinstance(call, Mapping):
            raise ValidationError(where, f"meta.usage_per_call.{i}", "a table of token counts", call)
        counts = {}
        for name in _CALL_FIELDS:
            value = call.get(name, 0)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValidationError(where, f"meta.usage_per_call.{i}.{name}", "a whole number >= 0", value)
            counts[name] = value
        if counts["cache_read_tokens"] + counts["cache_write_tokens"] > counts["input_tokens"]:
            raise ValidationError(
                where, f"meta.usage_per_call.{i}.input_tokens", "at least the cached tokens it includes", counts
            )
        calls.append(Call(**counts))
    for name in _CALL_FIELDS:
        total, summed = getattr(submission, name), sum(getattr(c, name) for c in calls)
        if total is not None and total != summed:
            raise ValidationError(where, name, f"the sum of meta.usage_per_call's {name} ({summed})", total)
    return calls


class Pricer:
    """Prices submissions as the configuration says (see the module's note).

    :param tables: the sources of ``price_tables``, consulted first, in order.
    :param source: the configured ``price_source`` (``None``: the tables alone).
    """

    def __init__(self, config: ScoringConfig, tables: Sequence[PriceSource], source: PriceSource | None) -> None:
        self.config = config
        self.sources = [*tables, *([source] if source is not None else [])]
        self.at = moment(config.price_date) if config.price_date else None
        self._unknown: dict[tuple[str, str | None], str] = {}
        """What a model no source knows was expected to be, by (name, provider): the
        nearest names are a fuzzy search of every known name (27 ms), asked once per model."""

    @property
    def version(self) -> str:
        """Every consulted table's version, in the order they are consulted."""
        return "; ".join(s.version for s in self.sources) or "none"

    def when(self, submission: Submission) -> datetime.datetime:
        """The time a run is priced at: ``price_date``, else its start, else its end."""
        when = self.at or moment(submission.started_at or submission.finished_at or "")
        if when is None:
            raise ValidationError(
                describe(submission), "started_at", "the run's date to price it at (or set price_date for every run)"
            )
        return when

    def rates(self, submission: Submission, model: str) -> tuple[Rates, str]:
        """The prices of the run's model, through ``[model_aliases]``, from the first source that
        knows it, and that source's version.

        :raises ValidationError: no source knows the model, naming the nearest names they know.
        """
        name = self.config.model_aliases.get(model, model)
        at = self.when(submission)
        for source in self.sources:
            found = source.rates(name, submission.provider, at)
            if found is not None:
                return found, source.version
        alias = f" (alias of {model!r})" if name != model else ""
        expected = self._expected(name, submission.provider)
        raise ValidationError(describe(submission), "model", expected, f"{name}{alias}")

    def _expected(self, name: str, provider: str | None) -> str:
        """The refusal's "expected" text for a model no source knows, with the nearest names."""
        key = (name, provider)
        if key not in self._unknown:
            known = list(dict.fromkeys(n.lower() for s in self.sources for n in s.known_models()))
            nearest = difflib.get_close_matches(name.lower(), known, n=_NEAREST, cutoff=0.5)
            hint = f" (nearest: {', '.join(nearest)})" if nearest else ""
            at_provider = f" at provider {provider!r}" if provider else ""
            self._unknown[key] = (
                f"a model the price tables ({self.version}) know{at_provider}{hint}; "
                "name it in [model_aliases] or add it to price_tables"
            )
        return self._unknown[key]

    def quote(self, submission: Submission) -> Quote | None:
        """The run's cost priced from its usage, or ``None`` when it has no model or no input
        and output counts to price."""
        calls = _calls(submission)
        if submission.model is None or (calls is None and None in (submission.input_tokens, submission.output_tokens)):
            return None
        rates, table = self.rates(submission, submission.model)
        if calls is None:
            calls = [Call(*(getattr(submission, name) or 0 for name in _CALL_FIELDS))]
            return price_calls(rates, calls, per_call=False, table=table)
        return price_calls(rates, calls, per_call=True, table=table)

    def price(self, submission: Submission) -> Submission:
        """The submission with its cost as ``cost_source`` says, and ``meta.pricing`` saying how."""
        earlier = submission.meta.get("pricing")
        reported = earlier.get("reported") if isinstance(earlier, Mapping) else submission.estimated_cost
        if self.config.cost_source == "priced_when_missing" and reported:
            return self._with(submission, reported, {"source": "reported", "reported": reported})
        quote = self.quote(submission)
        if quote is None:
            why = "no model" if submission.model is None else "no input_tokens and output_tokens"
            return self._with(submission, None, {"source": "unpriced", "reported": reported, "reason": why})
        priced = float(quote.total)
        note: dict[str, Any] = {
            "source": "priced",
            "reported": reported,
            "priced": priced,
            "model": quote.rates.model,
            "provider": quote.rates.provider,
            "date": self.when(submission).date().isoformat(),
            "table": quote.table,
        }
        if quote.band_unknown is not None:
            note["band_unknown"] = quote.band_unknown
        return self._with(submission, priced, note)

    @staticmethod
    def _with(submission: Submission, cost: float | None, note: dict[str, Any]) -> Submission:
        return attrs.evolve(submission, estimated_cost=cost, meta={**submission.meta, "pricing": note})


def pricer_of(config: ScoringConfig, sources: Mapping[str, PriceSource]) -> Pricer | None:
    """The pricer the configuration asks for: ``None`` under ``cost_source = "reported"``.

    :raises UnknownComponentError: ``price_source`` names no registered source.
    :raises ValidationError: a price table is not valid, or there is nothing to price with.
    """
    if config.cost_source == "reported":
        return None
    source = sources[config.price_source] if config.price_source else None
    tables = [PriceTable(path) for path in config.price_tables]
    if source is None and not tables:
        raise ValidationError("configuration", "price_tables", "a price table (or a price_source) to price runs with")
    return Pricer(config, tables, source)


def structuring(structure_one: Callable[[Any, type], Any], pricer: Pricer | None) -> Callable[[Any, type], Any]:
    """How records become models: structured, then priced when ``cost_source`` prices."""
    if pricer is None:
        return structure_one
    return lambda record, cls: pricer.price(structure_one(record, cls))


def pricing_algorithms(config: ScoringConfig, pricer: Pricer | None) -> dict[str, str]:
    """What every evaluation records of where its costs came from."""
    return {"cost_source": config.cost_source, **({"price_table": pricer.version} if pricer else {})}
