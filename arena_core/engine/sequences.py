"""Sequences read in place: items built from their position when read, sequences joined,
a list grown by appending.

Results and baselines of a batch hold arrays and build an object (an ``Evaluation``, a
``Baseline``) only when it is indexed; they, and the joined and grown sequences a store's
pipeline keeps names in, are :class:`BuiltOnAccess`, so indexing, slicing and bounds behave the
same.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from typing import Any, TypeVar, overload

import numpy as np

__all__ = ["BuiltOnAccess", "Filled", "Grown", "Joined"]

T = TypeVar("T")


class BuiltOnAccess(Sequence[T]):
    """``__getitem__`` (an index, negative ones, or a slice, which gives a list) over
    ``_item(position)``; subclasses give ``__len__`` and ``_item``."""

    __slots__ = ()

    def _item(self, position: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(len(self)))]
        position = index + len(self) if index < 0 else index
        if not 0 <= position < len(self):
            raise IndexError(index)
        return self._item(position)


class _ListLike(BuiltOnAccess[T]):
    """Equal to a list or tuple of the same items, as the lists these sequences stand for are."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, _ListLike)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are unhashable


class Joined(_ListLike[T]):
    """Sequences one after the other, read in place: tasks' stored rows and a batch's new ones
    are scored together without copying the stored rows' names (a copy touches every one of
    them, and a long-lived history's names lie spread over memory: at 10,000 runs a task a
    batch spent more time waiting on memory than computing)."""

    __slots__ = ("_parts", "_starts")

    def __init__(self, *parts: Sequence[T]) -> None:
        self._parts = parts
        self._starts = [0]
        for part in parts:
            self._starts.append(self._starts[-1] + len(part))

    def __len__(self) -> int:
        return self._starts[-1]

    def __iter__(self) -> Iterator[T]:
        return chain.from_iterable(self._parts)

    def _item(self, position: int) -> T:
        part = bisect_right(self._starts, position) - 1
        return self._parts[part][position - self._starts[part]]


class Filled:
    """An array and how many of its slots hold items, the rest room to grow: the store every
    sequence grown over it (a :class:`Grown`, a store's kept figures) reads its first items from."""

    __slots__ = ("array", "filled")

    def __init__(self, array: np.ndarray, filled: int) -> None:
        self.array = array
        self.filled = filled

    def plus(self, length: int, added: np.ndarray, empty: Callable[[int], np.ndarray]) -> Filled:
        """The first ``length`` items, then ``added``, written after them in this array when
        they are all it holds (else a longer sequence shares it: it keeps its items, and these
        are copied into an array of their own, made by ``empty``); past its room, the array is
        copied into one of half again the length needed, which the earlier sequences read their
        first items from too."""
        items = self
        needed = length + len(added)
        if items.filled != length:
            items = Filled(empty(needed), length)
            items.array[:length] = self.array[:length]
        elif needed > len(items.array):
            larger = empty(needed + needed // 2)
            larger[:length] = items.array[:length]
            items.array = larger
        if len(added):
            items.array[length:needed] = added
        items.filled = needed
        return items


class Grown(_ListLike[T]):
    """The first items of a list that only grows: :meth:`plus` gives the longer sequence that
    follows, sharing the list, in time proportional to what is added (a store keeps each
    task's names so, a batch appending its runs to them). A list is extended only by the
    longest sequence over it, so every other keeps its items; any other copies its own.

    The items are held in a NumPy array of objects with room to grow (half again its length
    when full), not a Python list: the cyclic garbage collector does not look into an array, and
    a store that kept a million runs' names in lists made every full collection visit 14
    million references (a tenth of a second, once per batch of 5,000 runs at 1,000,000 stored).
    """

    __slots__ = ("_items", "_length")

    def __init__(self, items: Iterable[T]) -> None:
        values = items if isinstance(items, list) else list(items)
        self._items = Filled(_objects(values, len(values)), len(values))
        self._length = len(values)

    @classmethod
    def _over(cls, items: Filled, length: int) -> Grown[T]:
        found = cls.__new__(cls)
        found._items, found._length = items, length
        return found

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[T]:
        return iter(self._items.array[: self._length].tolist())

    def _item(self, position: int) -> T:
        item: T = self._items.array[position]
        return item

    def plus(self, more: Iterable[T]) -> Grown[T]:
        """These items, then ``more``."""
        added = more if isinstance(more, list) else list(more)
        items = self._items.plus(self._length, np.fromiter(added, dtype=object, count=len(added)), _no_objects)
        return Grown._over(items, items.filled)


def _no_objects(size: int) -> np.ndarray:
    """An array of ``size`` slots, each ``None``."""
    return np.full(size, None, dtype=object)


def _objects(values: list[Any] | np.ndarray, size: int) -> np.ndarray:
    """An array of ``size`` objects starting with ``values`` (a list's tuple is one item, not a
    row), the rest ``None``."""
    array = _no_objects(size)
    array[: len(values)] = (
        values if isinstance(values, np.ndarray) else np.fromiter(values, dtype=object, count=len(values))
    )
    return array
