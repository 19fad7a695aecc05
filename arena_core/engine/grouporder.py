"""Each figure's counted values in order within their groups, when a baseline first needs them:
the medians (by counting whole numbers, else by sorting or selecting) and the token quartiles.

Kept apart from :mod:`arena_core.engine.grouped`, which computes the baselines from them: the
order is the part of a batch's baselines that grows with the stored history of its tasks.
"""

from __future__ import annotations

import numpy as np

from arena_core.engine.columns import Columns, all_measured, order_within_groups, stable_order
from arena_core.engine.telemetry import ZERO_MEANS_MISSING

__all__ = ["SORTED_APART", "GroupOrder"]


#: The largest whole number :func:`_counted_medians` counts: iteration counts (an agent's cap is
#: commonly 100 to 250 turns), tool calls of short runs.
_COUNTED_UP_TO = 1023


def _counted_medians(values: np.ndarray, groups: np.ndarray, count: int) -> np.ndarray | None:
    """Each group's median by counting, without a sort, when the values are whole numbers from
    0 to :data:`_COUNTED_UP_TO` (iterations are) and the table of groups by values stays within a
    few times the rows; ``None`` otherwise. 0 for a group without values."""
    if not len(values) or values.min() < 0 or values.max() > _COUNTED_UP_TO or (np.trunc(values) != values).any():
        return None
    width = int(values.max()) + 1
    if count * width > 4 * len(values) + 4096:
        return None
    table = np.bincount(groups * width + values.astype(np.int64), minlength=count * width).reshape(count, width)
    below = table.cumsum(axis=1)  # per group, how many values are at most each whole number
    length = below[:, -1]
    # The values at ranks (n-1)//2 and n//2 (from 0): the middle one, or the middle two.
    lower = (below <= ((length - 1) // 2)[:, None]).sum(axis=1)
    upper = (below <= (length // 2)[:, None]).sum(axis=1)
    medians: np.ndarray = np.where(length > 0, (lower + upper) / 2, 0.0)
    return medians


#: Groups of at least this many rows on average are sorted one at a time (see
#: :meth:`GroupOrder.sorted`); fewer, all at once (500 groups of 11 rows: 0.19 ms at once,
#: 0.36 ms one at a time).
SORTED_APART = 32


class GroupOrder:
    """Each figure's counted values sorted within their groups, when first needed: medians and
    the token quartiles need the order, the bounds do not, and the batch path's default metrics
    read only the bounds and the median of iterations (a sort of a million values is 0.05 s)."""

    def __init__(self, columns: Columns, groups: np.ndarray, count: int, assume_one: bool) -> None:
        self._columns, self._groups, self._count, self._assume_one = columns, groups, count, assume_one
        self._medians: dict[str, np.ndarray] = {}
        self._quartiles: tuple[np.ndarray, np.ndarray] | None = None

    def kept(self, field: str) -> tuple[np.ndarray, np.ndarray]:
        """(the values that count toward the baseline, their groups): measured, and for time and
        cost positive; an absent iteration count is 1 when ``assume_one``."""
        values = self._columns.numeric[field]
        if all_measured(values, field in ZERO_MEANS_MISSING):
            return values, self._groups  # every row counts: nothing to copy
        if field == "iterations" and self._assume_one:
            values = np.where(np.isnan(values), 1.0, values)
        keep = ~np.isnan(values)
        if field in ZERO_MEANS_MISSING:
            keep &= values > 0
        if keep.all():  # every row counts: nothing to copy
            return values, self._groups
        return values[keep], self._groups[keep]

    def sorted(self, field: str) -> tuple[np.ndarray, np.ndarray]:
        """(the kept values by group, then value; where each group starts, and the end).

        Groups of many rows (a pipeline batch's tasks, each with its history) are laid out by
        group (a radix order, none when they already are) and each sorted in place: sorting
        the values alone is several times faster than the permutation that sorts them (5 tasks
        of 10,000 runs: 0.22 ms against 1.8 ms). A single group (a post's task) is sorted so too:
        a sort of 10,000 values takes 0.06 ms, selecting its median and quartiles with
        ``np.partition`` 0.26 ms. Many small groups take one sort of all."""
        values, groups = self.kept(field)
        if len(values) < SORTED_APART * self._count:
            order = order_within_groups(values, groups)
            return values[order], np.searchsorted(groups[order], np.arange(self._count + 1))
        order = stable_order(groups)
        data = values[order]
        bounds = np.searchsorted(groups[order], np.arange(self._count + 1))
        for start, end in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            if end - start > 1:
                data[start:end].sort()
        return data, bounds

    def median(self, field: str) -> np.ndarray:
        """Each group's median (``statistics.median``: the mean of the middle two for an even
        count); 0 for a group without values."""
        if field not in self._medians and field != "total_tokens":
            counted = _counted_medians(*self.kept(field), self._count)
            if counted is not None:
                self._medians[field] = counted
        if field not in self._medians:
            data, bounds = self.sorted(field)
            start, length = bounds[:-1], np.diff(bounds)
            if field == "total_tokens":
                self._quartiles = _quantiles(data, start, length)
            if not len(data):
                self._medians[field] = np.zeros(self._count)
                return self._medians[field]
            safe = np.where(length > 0, start, 0)
            middle = (safe + length // 2).clip(max=len(data) - 1)
            lower = np.where(length % 2 == 0, np.maximum(middle - 1, safe), middle).clip(max=len(data) - 1)
            found = np.where(length % 2 == 1, data[middle], (data[lower] + data[middle]) / 2)
            self._medians[field] = np.where(length > 0, found, 0.0)
        return self._medians[field]

    def quartiles(self) -> tuple[np.ndarray, np.ndarray]:
        """Each group's first and third token quartiles (see :func:`_quantiles`)."""
        if self._quartiles is None:
            self.median("total_tokens")
        assert self._quartiles is not None
        return self._quartiles


def _quantiles(data: np.ndarray, start: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group, ``statistics.quantiles(group, n=4)`` first and third values ('exclusive'
    method, the default) on sorted data; NaN for groups of fewer than 2 values."""
    out = []
    m = length + 1
    for i in (1, 3):
        j = np.clip(i * m // 4, 1, np.maximum(length - 1, 1))
        delta = (i * m - j * 4).astype(float)
        low = np.clip(start + j - 1, 0, max(len(data) - 1, 0))
        high = np.clip(start + j, 0, max(len(data) - 1, 0))
        values = (data[low] * (4 - delta) + data[high] * delta) / 4 if len(data) else np.zeros(len(start))
        out.append(np.where(length >= 2, values, np.nan))
    return out[0], out[1]
