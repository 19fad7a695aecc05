"""Plain-text tables for the terminal: right-aligned numbers, left-aligned text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["printable", "render"]


def printable(text: str) -> str:
    """``text`` safe for a terminal: control, bidirectional and surrogate characters escaped as
    ``\\x1b``, ``\\u202e``, ``\\ud800``, so no record can move the cursor, recolour or
    reorder what is shown, or fail to encode."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == "\n" else c.encode("unicode_escape").decode("ascii") for c in text)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return printable(str(value))


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
