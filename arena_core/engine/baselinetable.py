"""Many groups' baselines as arrays, each :class:`Baseline` object built only when asked for.

The batch engine reads a baseline's figures as arrays, one value per group, and nothing else
unless a metric asks for :attr:`Baseline.samples`. With a hundred thousand tasks of a few runs,
building a validated :class:`Baseline` per task was the engine's largest per-task cost, for
objects nobody read. A :class:`BaselineTable` holds the arrays and builds a group's object on
first access, exactly as it would have been built before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

import attrs
import numpy as np

from arena_core.engine.sequences import BuiltOnAccess
from arena_core.model.records import Baseline

__all__ = ["FIGURE_FIELDS", "BaselineTable", "Figures", "figures_of"]

#: The numeric fields of a baseline: what the batch engine reads, one value per baseline.
FIGURE_FIELDS = tuple(
    a.name
    for a in attrs.fields(Baseline)
    if a.name not in ("task_id", "last_updated", "samples", "defaulted", "partial", "version")
)


def figures_of(baselines: Sequence[Baseline]) -> Mapping[str, np.ndarray]:
    """Each figure of ``baselines`` as an array (``None``, a figure not computed, as NaN)."""
    if isinstance(baselines, BaselineTable):
        return baselines.figures()
    return {f: np.array([getattr(b, f) for b in baselines], dtype=float) for f in FIGURE_FIELDS}


class Figures(Mapping[str, np.ndarray]):
    """Figure name to its array, one value per group; a figure given as a function is computed
    when first read, and kept. (A median sorts every run's value; the batch path's metrics read
    the bounds and, of the medians, only that of iterations.)"""

    def __init__(
        self, pending: Mapping[str, Callable[[], np.ndarray]], ready: Mapping[str, np.ndarray] | None = None
    ) -> None:
        self._ready = dict(ready or {})
        self._pending = {name: compute for name, compute in pending.items() if name not in self._ready}

    def __getitem__(self, name: str) -> np.ndarray:
        values = self._ready.get(name)
        if values is None:
            values = self._ready[name] = self._pending[name]()  # KeyError: no such figure
        return values

    def __iter__(self) -> Iterator[str]:
        return iter([*self._ready, *(name for name in self._pending if name not in self._ready)])

    def __len__(self) -> int:
        return len(self._ready.keys() | self._pending.keys())


class BaselineTable(BuiltOnAccess[Baseline]):
    """The baselines of a batch's groups: their figures as arrays, and each group's
    :class:`Baseline` built on first access by ``build(index)`` (and kept)."""

    def __init__(self, figures: Mapping[str, np.ndarray], build: Callable[[int], Baseline], size: int) -> None:
        self._figures = figures if isinstance(figures, Figures) else Figures({}, figures)
        self._build = build
        self._built: dict[int, Baseline] = {}
        self._size = size

    def __len__(self) -> int:
        return self._size

    def _item(self, position: int) -> Baseline:
        built = self._built.get(position)
        if built is None:
            built = self._built[position] = self._build(position)
        return built

    def figures(self) -> Mapping[str, np.ndarray]:
        """Each of :data:`FIGURE_FIELDS` as an array, one value per group (NaN: not computed)."""
        return self._figures

    def replaced(self, given: Mapping[int, Baseline]) -> BaselineTable:
        """This table with the baselines at some positions replaced by ``given`` ones."""
        figures = {name: values.copy() for name, values in self._figures.items()}
        for position, baseline in given.items():
            for name in FIGURE_FIELDS:
                value = getattr(baseline, name)
                figures[name][position] = np.nan if value is None else value
        return BaselineTable(figures, lambda i: given[i] if i in given else self[i], self._size)
