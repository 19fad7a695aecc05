"""Plain-text tables for the terminal: right-aligned numbers, left-aligned text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["render"]


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def render(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A table with a header rule; numeric columns are right-aligned."""
    cells = [[_cell(v) for v in row] for row in rows]
    numeric = [all(isinstance(row[i], int | float) or row[i] is None for row in rows) for i in range(len(headers))]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric, strict=True)
        ).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in cells)])
