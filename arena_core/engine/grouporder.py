"""Each figure's counted values in order within their groups, when a baseline first needs them:
the medians (by counting whole numbers, else by sorting or selecting) and the token quartiles.

Kept apart from :mod:`arena_core.engine.grouped`, which computes the baselines from them: the
order is the part of a batch's baselines that grows with the stored history of its tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from arena_core.engine.columns import Columns, all_measured
from arena_core.engine.ordered import merged_in, order_within_groups, stable_order, union_at
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

    def __init__(
        self,
        columns: Columns,
        groups: np.ndarray,
        count: int,
        assume_one: bool,
        parts: Sequence[tuple[Columns, Columns]] | None = None,
    ) -> None:
        """:param parts: each group's rows as two columns, its history then the rows added to it,
        when ``columns`` holds them in that order (a pipeline batch's tasks under the task
        scope): medians and quartiles are read by rank from the history's order
        (:meth:`Columns.order`, kept between batches by a store) and the added values, sorted,
        instead of a sort of all."""
        self._columns, self._groups, self._count, self._assume_one = columns, groups, count, assume_one
        self._parts = parts
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
        ``np.partition`` 0.26 ms. Many small groups take one sort of all. Groups given as
        ``parts`` merge their history's order and their added values (medians and quartiles
        read those by rank instead, see :meth:`_ranked`)."""
        if self._in_parts():
            merged = [merged_in(large, small) for large, small in self._kept_parts(field)]
            lengths = np.fromiter(map(len, merged), dtype=np.int64, count=len(merged))
            return np.concatenate(merged) if merged else np.zeros(0), np.concatenate([[0], np.cumsum(lengths)])
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

    def _in_parts(self) -> bool:
        """Whether the groups are read part by part, history in order (see ``parts``): groups of
        :data:`SORTED_APART` rows on average, as each would be sorted apart."""
        return self._parts is not None and len(self._groups) >= SORTED_APART * self._count

    def _kept_parts(self, field: str) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each group's kept values (:meth:`kept`) as two sorted arrays whose union they are: the
        history's sorted part, and its values kept apart with the added ones, sorted (a few
        hundred at most); cut to those that count (NaN sort last)."""
        assert self._parts is not None
        found = []
        for history, added in self._parts:
            order = history.order(field)
            large = order.base
            more = added.numeric[field]
            small = np.sort(np.concatenate([order.added, more]) if len(order.added) else more)
            measured, fewer = int(np.searchsorted(large, np.nan)), int(np.searchsorted(small, np.nan))
            absent = len(large) - measured + len(small) - fewer
            large, small = large[:measured], small[:fewer]
            if field == "iterations" and self._assume_one and absent:  # an absent count is 1
                if not len(large) and not len(small):  # none reported: ones, without filling memory
                    large = np.broadcast_to(1.0, absent)
                elif len(large):
                    small = merged_in(small, np.ones(absent))
                else:
                    large = np.ones(absent)
            elif field in ZERO_MEANS_MISSING:
                large = large[np.searchsorted(large, 0.0, side="right") :]
                small = small[np.searchsorted(small, 0.0, side="right") :]
            found.append((large, small))
        return found

    def _ranked(self, field: str) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
        """(each group's count of kept values; what reads, per group, the values at ranks
        within it, one row of ranks a group). A rank beyond a group's values reads its last
        (a group without values reads 0): callers keep only the ranks each group has.

        Groups given as ``parts`` read each rank from their two sorted arrays
        (:func:`~arena_core.engine.ordered.union_at`) without merging them, which would copy
        every stored value of the task: a batch over 100 tasks of 10,000 runs took 15-20 ms a
        figure to sort them, and about 8 ms to merge them."""
        if self._in_parts():
            parts = self._kept_parts(field)
            lengths = np.fromiter((len(a) + len(b) for a, b in parts), dtype=np.int64, count=len(parts))

            def read_parts(ranks: np.ndarray) -> np.ndarray:
                values = np.zeros(ranks.shape)
                for g in np.flatnonzero(lengths).tolist():
                    values[g] = union_at(*parts[g], ranks[g].clip(0, lengths[g] - 1))
                return values

            return lengths, read_parts
        data, bounds = self.sorted(field)
        start = bounds[:-1]

        def read_sorted(ranks: np.ndarray) -> np.ndarray:
            if not len(data):
                return np.zeros(ranks.shape)
            found: np.ndarray = data[(start[:, None] + ranks).clip(0, len(data) - 1)]
            return found

        return np.diff(bounds), read_sorted

    def median(self, field: str) -> np.ndarray:
        """Each group's median (``statistics.median``: the mean of the middle two for an even
        count); 0 for a group without values."""
        if field not in self._medians and field != "total_tokens" and not self._in_parts():
            counted = _counted_medians(*self.kept(field), self._count)
            if counted is not None:
                self._medians[field] = counted
        if field not in self._medians:
            length, read = self._ranked(field)
            middle = length // 2
            lower = np.where(length % 2 == 0, middle - 1, middle)
            ranks = [lower, middle]
            if field == "total_tokens":
                quartiles = _quartile_ranks(length)
                ranks += [r for low, high, _ in quartiles for r in (low, high)]
            values = read(np.column_stack(ranks))
            found = np.where(length % 2 == 1, values[:, 1], (values[:, 0] + values[:, 1]) / 2)
            self._medians[field] = np.where(length > 0, found, 0.0)
            if field == "total_tokens":
                self._quartiles = tuple(  # type: ignore[assignment]
                    np.where(length >= 2, (values[:, k] * (4 - delta) + values[:, k + 1] * delta) / 4, np.nan)
                    for k, (_, _, delta) in zip((2, 4), quartiles, strict=True)
                )
        return self._medians[field]

    def quartiles(self) -> tuple[np.ndarray, np.ndarray]:
        """Each group's first and third token quartiles (see :func:`_quartile_ranks`)."""
        if self._quartiles is None:
            self.median("total_tokens")
        assert self._quartiles is not None
        return self._quartiles


def _quartile_ranks(length: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per group of ``length`` sorted values, ``statistics.quantiles(group, n=4)``'s first and
    third values ('exclusive' method, the default) as (lower rank, upper rank, weight of the
    upper out of 4): each is ``(low * (4 - weight) + high * weight) / 4``, for groups of 2
    values or more (NaN for the others)."""
    found = []
    m = length + 1
    for i in (1, 3):
        j = np.clip(i * m // 4, 1, np.maximum(length - 1, 1))
        found.append((j - 1, j, (i * m - j * 4).astype(float)))
    return found
