"""Sequences read in place: items built from their position when read, sequences joined,
a list grown by appending.

Results and baselines of a batch hold arrays and build an object (an ``Evaluation``, a
``Baseline``) only when it is indexed; they, and the joined and grown sequences a store's
pipeline keeps names in, are :class:`BuiltOnAccess`, so indexing, slicing and bounds behave the
same.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice
from typing import TypeVar, overload

__all__ = ["BuiltOnAccess", "Grown", "Joined"]

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


class Grown(_ListLike[T]):
    """The first items of a list that only grows: :meth:`plus` gives the longer sequence that
    follows, sharing the list, in time proportional to what is added (a store keeps each
    task's names so, a batch appending its runs to them). A list is extended only by the
    longest sequence over it, so every other keeps its items; any other copies its own."""

    __slots__ = ("_items", "_length")

    def __init__(self, items: Iterable[T], length: int | None = None) -> None:
        self._items: list[T] = items if isinstance(items, list) and length is not None else list(items)
        self._length = len(self._items) if length is None else length

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[T]:
        return islice(self._items, self._length)

    def _item(self, position: int) -> T:
        return self._items[position]

    def plus(self, more: Iterable[T]) -> Grown[T]:
        """These items, then ``more``."""
        items = self._items
        if len(items) != self._length:  # a longer sequence shares the list: leave it its items
            items = items[: self._length]
        items.extend(more)
        return Grown(items, len(items))
