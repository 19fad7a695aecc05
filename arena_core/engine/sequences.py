"""A sequence whose items are built from their position when read.

Results and baselines of a batch hold arrays and build an object (an ``Evaluation``, a
``Baseline``) only when it is indexed; both are this sequence, so indexing, slicing and bounds
behave the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar, overload

__all__ = ["BuiltOnAccess"]

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
